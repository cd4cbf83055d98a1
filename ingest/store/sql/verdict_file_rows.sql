-- One row per stored call of a judge in a pool, as a verdict file names it: format, prompt id, candidate
-- ids (slot B null for a pointwise format), raw output, error, sample, decoding mode, answer probabilities (as a file's label_probs),
-- the format's kind and the latency; by format, prompt, slots and sample.
SELECT f.name AS format, p.prompt_id, a.candidate_id AS a_id, b.candidate_id AS b_id, v.raw, v.error, v.sample,
       v.decoding, v.answer_probs AS label_probs, f.kind, v.latency_ms
FROM verdicts v JOIN formats f USING (format_id) JOIN prompts p USING (pool_id, prompt_idx)
JOIN judges j USING (judge_id) JOIN pools USING (pool_id)
JOIN candidates a ON a.pool_id = v.pool_id AND a.cand_idx = v.a_idx
LEFT JOIN candidates b ON b.pool_id = v.pool_id AND b.cand_idx = v.b_idx
WHERE j.name = $judge AND pools.name = $pool
ORDER BY f.name, v.prompt_idx, v.a_idx, v.b_idx NULLS FIRST, v.sample
