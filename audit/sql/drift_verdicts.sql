-- One row per stored verdict of one judge ($judge_id) on the pool: the call (format, decoding,
-- prompt, candidates in slot A and B, sample), its reading (answer, or the parse status when there is
-- none; the normalised score s = (value - value_lo) / (value_hi - value_lo)), and the judge version
-- of the cell run that made it: (reported model id, template hash, decoding settings).
SELECT f.name AS format, v.decoding, v.prompt_idx, p.prompt_id, v.a_idx, v.b_idx,
       ca.candidate_id AS a_id, cb.candidate_id AS b_id, v.sample,
       coalesce(v.answer, v.status) AS reading, v.value,
       (v.value - f.value_lo) / nullif(f.value_hi - f.value_lo, 0) AS s,
       v.cell_run_id, r.judge_model, r.template_hash, CAST(r.decoding_settings AS VARCHAR) AS settings,
       r.source, r.started_at
FROM verdict_source v
JOIN formats f USING (format_id)
JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx
JOIN candidates ca ON ca.pool_id = v.pool_id AND ca.cand_idx = v.a_idx
LEFT JOIN candidates cb ON cb.pool_id = v.pool_id AND cb.cand_idx = v.b_idx
LEFT JOIN cell_runs r ON r.cell_run_id = v.cell_run_id
WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id
ORDER BY f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample, v.cell_run_id
