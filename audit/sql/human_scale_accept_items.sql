-- The human scale's accept items (audit._human_scale): one row per (pointwise cell, candidate with a
-- human accept label that the cell scored): the cell judge/format/decoding, the candidate's prompt_idx,
-- cand_idx and system (candidate_id), x = the mean over the cell's parsed samples of the normalised
-- score (value - value_lo) / (value_hi - value_lo), y = the mean over the candidate's labels of accept 1
-- / reject 0. Only the labelled candidates' verdicts are aggregated (the labels are few, the verdicts
-- many); the cells' names are joined after.
WITH humans AS (
    SELECT cand_idx, avg(CASE WHEN label = 'accept' THEN 1.0 ELSE 0.0 END) AS y
    FROM accept_labels WHERE pool_id = $pool_id
    GROUP BY cand_idx
), points AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.a_idx AS cand_idx,
           avg((v.value - f.value_lo) / (f.value_hi - f.value_lo)) AS x
    FROM verdict_source v JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'pointwise' AND v.value IS NOT NULL AND f.value_hi > f.value_lo
      AND v.a_idx IN (SELECT cand_idx FROM humans)
    GROUP BY ALL
)
SELECT j.name AS judge, fm.name AS format, p.decoding, c.prompt_idx::BIGINT AS prompt_idx,
       p.cand_idx::BIGINT AS cand_idx, c.candidate_id AS system, p.x::DOUBLE AS x, h.y::DOUBLE AS y
FROM points p JOIN humans h USING (cand_idx)
JOIN judges j USING (judge_id) JOIN formats fm USING (format_id)
JOIN candidates c ON c.pool_id = $pool_id AND c.cand_idx = p.cand_idx
ORDER BY judge, format, decoding, prompt_idx, cand_idx
