-- One row per candidate of the prompts $prompt_lo..$prompt_hi of the pool (a block of whole prompts,
-- as the audit reads a pool too large to hold at once): its cand_idx, where it sits and its
-- reference (NaN where missing). Unordered: the caller places rows by cand_idx.
SELECT cand_idx, prompt_idx, position, coalesce(CAST(reference AS DOUBLE), 'NaN'::DOUBLE) AS reference
FROM candidates
WHERE pool_id = $pool_id AND prompt_idx BETWEEN $prompt_lo AND $prompt_hi
