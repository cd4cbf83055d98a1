-- calibration_calls.sql's rows on the pool's human-labelled pairs alone (the calls calibrate compares
-- with the stored labels; the others it would read only to drop): one row per parsed comparative call
-- between two different candidates whose pair (either way round, on its prompt) has a stored label:
-- the cell (judge, format, decoding), the prompt, the candidates in slot A and slot B, and the margin in
-- favour of slot A.
WITH labelled AS (
    SELECT DISTINCT prompt_idx, least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx
    FROM pair_labels WHERE pool_id = $pool_id
)
SELECT j.name AS judge, f.name AS format, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.value
FROM verdict_source v
JOIN labelled l ON l.prompt_idx = v.prompt_idx AND l.lo_idx = least(v.a_idx, v.b_idx)
     AND l.hi_idx = greatest(v.a_idx, v.b_idx)
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
  AND v.value IS NOT NULL
ORDER BY j.name, f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample
