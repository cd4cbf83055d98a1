-- One row per candidate a baseline policy chooses among, with the value it selects by: 'random' 0
-- for every candidate, 'length' the response's characters, 'full' the reference (candidates without
-- one, or with NaN, left out). Unordered; the caller drops the held-out prompts.
SELECT prompt_idx::BIGINT AS prompt_idx, cand_idx::BIGINT AS cand_idx, value
FROM (
    SELECT prompt_idx, cand_idx,
           CASE $policy WHEN 'random' THEN 0.0
                        WHEN 'length' THEN CAST(length(response) AS DOUBLE)
                        ELSE CAST(reference AS DOUBLE) END AS value
    FROM candidates
    WHERE pool_id = $pool_id
)
WHERE value IS NOT NULL AND NOT isnan(value)
