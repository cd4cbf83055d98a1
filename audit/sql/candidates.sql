-- One row per candidate of the pool, in cand_idx order (0..n-1): where it sits and its reference.
SELECT cand_idx, prompt_idx, position, reference
FROM candidates
WHERE pool_id = $pool_id
ORDER BY cand_idx
