-- One row per (judge, format, decoding, pair of two candidates of one prompt) that a comparative cell
-- judged: the pair as (lo_idx, hi_idx), lo_idx < hi_idx, and f = the mean over its parsed calls in
-- either order (every sample) of 1 / 0.5 / 0 as the margin favours lo_idx / ties / favours hi_idx.
SELECT j.name AS judge, f.name AS format, v.decoding, v.prompt_idx::BIGINT AS prompt_idx,
       least(v.a_idx, v.b_idx)::BIGINT AS lo_idx, greatest(v.a_idx, v.b_idx)::BIGINT AS hi_idx,
       avg(CASE WHEN v.value = 0 THEN 0.5
                WHEN (v.value > 0) = (v.a_idx < v.b_idx) THEN 1.0 ELSE 0.0 END) AS f
FROM verdict_source v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx AND v.value IS NOT NULL
GROUP BY ALL
ORDER BY judge, format, decoding, prompt_idx, lo_idx, hi_idx
