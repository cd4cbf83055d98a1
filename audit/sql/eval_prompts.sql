-- One row per prompt of a pool: its text, whether any candidate is in split 'heldout', and its
-- reference-top answer (highest reference; ties by listing position, then cand_idx). ref_idx is
-- null for a prompt without any reference.
WITH ranked AS (
    SELECT c.prompt_idx, c.cand_idx, c.response,
           row_number() OVER (PARTITION BY c.prompt_idx
                              ORDER BY c.reference DESC NULLS LAST, c.position, c.cand_idx) AS r,
           c.reference
    FROM candidates c
    WHERE c.pool_id = $pool_id
)
SELECT p.prompt_idx, p.prompt_id, p.prompt,
       bool_or(c.split = 'heldout') AS marked_heldout,
       any_value(CASE WHEN rk.reference IS NOT NULL THEN rk.cand_idx END) AS ref_idx,
       any_value(CASE WHEN rk.reference IS NOT NULL THEN rk.response END) AS ref_answer
FROM prompts p
JOIN candidates c ON c.pool_id = p.pool_id AND c.prompt_idx = p.prompt_idx
LEFT JOIN ranked rk ON rk.prompt_idx = p.prompt_idx AND rk.r = 1
WHERE p.pool_id = $pool_id
GROUP BY p.prompt_idx, p.prompt_id, p.prompt
ORDER BY p.prompt_idx
