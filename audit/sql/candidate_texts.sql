-- One row per wanted candidate (the registered frame wanted_df: cand_idx, ord) of pool $pool_id,
-- in the order wanted: its prompt and response.
SELECT c.cand_idx::BIGINT AS cand_idx, c.prompt_idx::BIGINT AS prompt_idx, p.prompt_id,
       c.candidate_id, p.prompt, c.response
FROM wanted_df w
JOIN candidates c ON c.pool_id = $pool_id AND c.cand_idx = w.cand_idx
JOIN prompts p ON p.pool_id = c.pool_id AND p.prompt_idx = c.prompt_idx
ORDER BY w.ord
