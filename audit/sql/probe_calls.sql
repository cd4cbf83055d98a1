-- One row per comparative judge call between two different candidates of a pool (probes and the
-- mitigation comparison): the judge (its configured model and settings, which record a strategy
-- and its calls per verdict), the prompt, the candidates in slots A and B (ids, source models,
-- references), the parsed margin for slot A (null when unparsed or failed), and the tokens spent.
SELECT j.name AS judge, j.model AS judge_model, j.settings AS judge_settings, f.name AS format,
       p.prompt_id, v.prompt_idx, v.a_idx, v.b_idx, v.sample,
       ca.candidate_id AS a_id, cb.candidate_id AS b_id, ca.model AS a_model, cb.model AS b_model,
       ca.reference AS a_ref, cb.reference AS b_ref,
       v.value, v.status, v.tokens_in, v.tokens_out
FROM verdict_source v
JOIN judges j ON j.judge_id = v.judge_id
JOIN formats f ON f.format_id = v.format_id
JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx
JOIN candidates ca ON ca.pool_id = v.pool_id AND ca.cand_idx = v.a_idx
JOIN candidates cb ON cb.pool_id = v.pool_id AND cb.cand_idx = v.b_idx
WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
ORDER BY j.name, f.name, v.prompt_idx, v.a_idx, v.b_idx, v.sample
