-- One row per candidate of the pool (cand_idx runs 0..n-1): where it sits and its reference (NaN
-- where missing). Unordered: the caller places rows by cand_idx, cheaper than sorting here.
SELECT cand_idx, prompt_idx, position, coalesce(CAST(reference AS DOUBLE), 'NaN'::DOUBLE) AS reference
FROM candidates
WHERE pool_id = $pool_id
