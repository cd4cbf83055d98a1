-- The human scale's prefer items (audit._human_scale): one row per (cell, human-labelled pair of two
-- candidates that the cell judged): the cell judge/format/decoding, the pair's prompt_idx, lo_idx <
-- hi_idx and their systems (candidate_id), y = the mean over the pair's labels of 1 / 0.5 / 0 as a
-- label favours lo_idx / ties / favours hi_idx, and x = the cell's preference for lo_idx: a pointwise
-- cell's (1 + f_lo - f_hi) / 2 of the two candidates' mean normalised scores over its parsed samples;
-- a comparative cell's mean over its parsed calls on the pair, in either order and every sample, of
-- 1 / 0.5 / 0 as the margin favours lo_idx / ties / favours hi_idx. Only the labelled candidates' and
-- pairs' verdicts are aggregated; the cells' names are joined after.
WITH humans AS (
    SELECT prompt_idx, least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx,
           avg(CASE WHEN label = 'tie' THEN 0.5 WHEN (label = 'A') = (a_idx < b_idx) THEN 1.0 ELSE 0.0 END) AS y
    FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx
    GROUP BY ALL
), ends AS (
    SELECT lo_idx AS cand_idx FROM humans UNION SELECT hi_idx FROM humans
), points AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.a_idx AS cand_idx,
           avg((v.value - f.value_lo) / (f.value_hi - f.value_lo)) AS f
    FROM verdict_source v JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'pointwise' AND v.value IS NOT NULL AND f.value_hi > f.value_lo
      AND v.a_idx IN (SELECT cand_idx FROM ends)
    GROUP BY ALL
), pointwise AS (
    SELECT a.judge_id, a.format_id, a.decoding, h.prompt_idx, h.lo_idx, h.hi_idx,
           (1.0 + a.f - b.f) / 2.0 AS x, h.y
    FROM humans h JOIN points a ON a.cand_idx = h.lo_idx
    JOIN points b ON b.cand_idx = h.hi_idx AND b.judge_id = a.judge_id AND b.format_id = a.format_id
         AND b.decoding = a.decoding
), comparative AS (
    SELECT v.judge_id, v.format_id, v.decoding, h.prompt_idx, h.lo_idx, h.hi_idx,
           avg(CASE WHEN v.value = 0 THEN 0.5 WHEN (v.value > 0) = (v.a_idx < v.b_idx) THEN 1.0 ELSE 0.0 END) AS x,
           h.y
    FROM verdict_source v JOIN formats f USING (format_id)
    JOIN humans h ON h.lo_idx = least(v.a_idx, v.b_idx) AND h.hi_idx = greatest(v.a_idx, v.b_idx)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx AND v.value IS NOT NULL
    GROUP BY v.judge_id, v.format_id, v.decoding, h.prompt_idx, h.lo_idx, h.hi_idx, h.y
), items AS (
    SELECT * FROM pointwise UNION ALL SELECT * FROM comparative
)
SELECT j.name AS judge, fm.name AS format, i.decoding, i.prompt_idx::BIGINT AS prompt_idx,
       i.lo_idx::BIGINT AS lo_idx, i.hi_idx::BIGINT AS hi_idx, lo.candidate_id AS lo_system,
       hi.candidate_id AS hi_system, i.x::DOUBLE AS x, i.y::DOUBLE AS y
FROM items i JOIN judges j USING (judge_id) JOIN formats fm USING (format_id)
JOIN candidates lo ON lo.pool_id = $pool_id AND lo.cand_idx = i.lo_idx
JOIN candidates hi ON hi.pool_id = $pool_id AND hi.cand_idx = i.hi_idx
ORDER BY judge, format, decoding, prompt_idx, lo_idx, hi_idx
