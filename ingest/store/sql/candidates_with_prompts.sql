-- One row per candidate of a pool, by prompt and listing position: the candidate with its prompt's text
-- (what a check call renders, and what a run's call count is planned from).
SELECT c.cand_idx, c.prompt_idx, c.position, c.reference, c.response, p.prompt
FROM candidates c JOIN prompts p USING (pool_id, prompt_idx)
WHERE c.pool_id = $pool_id
ORDER BY c.prompt_idx, c.position
