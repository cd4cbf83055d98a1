-- One row per (judge, format, decoding, candidate) of the pool's pointwise cells where the candidate
-- has a parsed verdict: f = the mean over its parsed samples of the normalised score
-- (value - value_lo) / (value_hi - value_lo), the prediction of a human's accept.
SELECT j.name AS judge, f.name AS format, v.decoding, v.a_idx::BIGINT AS cand_idx,
       avg((v.value - f.value_lo) / (f.value_hi - f.value_lo)) AS f
FROM verdict_source v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'pointwise' AND v.value IS NOT NULL AND f.value_hi > f.value_lo
GROUP BY ALL
ORDER BY judge, format, decoding, cand_idx
