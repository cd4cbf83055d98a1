-- One row per candidate of the pool: its prompt, listing position, how many candidates its prompt
-- has, its reference, model, split and response length in characters.
SELECT c.prompt_idx, p.prompt_id, c.candidate_id, c.position,
       count(*) OVER (PARTITION BY c.prompt_idx) AS k,
       c.reference, c.model, c.split, length(c.response) AS response_chars
FROM candidates c
JOIN prompts p ON p.pool_id = c.pool_id AND p.prompt_idx = c.prompt_idx
WHERE c.pool_id = $pool_id
ORDER BY c.cand_idx
