-- One row per prompt of the pool that has candidates, in the order of its first candidate: its id
-- and whether the pool marks it held out (any candidate with split 'heldout'): what curation's
-- held-out rule reads, without a row per candidate.
SELECT c.prompt_idx, p.prompt_id,
       coalesce(bool_or(c.split = 'heldout'), false) AS marked_heldout
FROM candidates c
JOIN prompts p ON p.pool_id = c.pool_id AND p.prompt_idx = c.prompt_idx
WHERE c.pool_id = $pool_id
GROUP BY c.prompt_idx, p.prompt_id
ORDER BY min(c.cand_idx)
