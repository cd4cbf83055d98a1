-- One row per candidate of a pool, by prompt and listing position: the candidate with the lengths of its
-- response and of its prompt's text (characters: code points, as Python's len counts them), not the texts
-- (what a run's call count and its characters are planned from: ingest.scoring.count_calls).
SELECT c.cand_idx, c.prompt_idx, c.position, c.reference,
       length(c.response)::BIGINT AS n_response, length(p.prompt)::BIGINT AS n_prompt
FROM candidates c JOIN prompts p USING (pool_id, prompt_idx)
WHERE c.pool_id = $pool_id
ORDER BY c.prompt_idx, c.position
