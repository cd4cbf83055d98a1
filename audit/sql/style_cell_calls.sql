-- One row per parsed call of one comparative cell between two different systems (candidate_ids), in call
-- order (audit._style.style_rank reads the cells one at a time): the cell (judge, format, decoding), the
-- prompt, the candidates in slot A and slot B (cand_idx and candidate_id) and the margin for slot A.
SELECT j.name AS judge, f.name AS format, v.decoding, p.prompt_id,
       v.a_idx::BIGINT AS a_idx, v.b_idx::BIGINT AS b_idx,
       ca.candidate_id AS a_id, cb.candidate_id AS b_id, v.value
FROM verdict_source v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx
JOIN candidates ca ON ca.pool_id = v.pool_id AND ca.cand_idx = v.a_idx
JOIN candidates cb ON cb.pool_id = v.pool_id AND cb.cand_idx = v.b_idx
WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id AND v.format_id = $format_id AND v.decoding = $decoding
  AND ca.candidate_id <> cb.candidate_id AND v.value IS NOT NULL
ORDER BY v.prompt_idx, v.a_idx, v.b_idx, v.sample
