-- One row per candidate of the pool, with what a baseline curation selects by: its response's
-- length in characters and its reference (NULL where missing). Unordered.
SELECT prompt_idx::BIGINT AS prompt_idx, cand_idx::BIGINT AS cand_idx,
       CAST(length(response) AS DOUBLE) AS chars, CAST(reference AS DOUBLE) AS reference
FROM candidates
WHERE pool_id = $pool_id
