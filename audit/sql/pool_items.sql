-- One row per candidate of the pool: cand_idx, its prompt (prompt_idx, prompt_id) and its system
-- (candidate_id).
SELECT c.cand_idx::BIGINT AS cand_idx, c.prompt_idx::BIGINT AS prompt_idx, p.prompt_id, c.candidate_id
FROM candidates c JOIN prompts p ON p.pool_id = c.pool_id AND p.prompt_idx = c.prompt_idx
WHERE c.pool_id = $pool_id
ORDER BY c.cand_idx
