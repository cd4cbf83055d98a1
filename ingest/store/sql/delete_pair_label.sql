-- Deletes one annotator's label of one pair of a pool (either way round), before their later label replaces it.
DELETE FROM pair_labels
WHERE pool_id = $pool_id AND prompt_idx = $prompt_idx AND annotator = $annotator
  AND least(a_idx, b_idx) = $lo AND greatest(a_idx, b_idx) = $hi
