-- Deletes the label one annotator gave a pair through a queue (undo on the Label page).
DELETE FROM pair_labels
WHERE pool_id = $pool_id AND prompt_idx = $prompt_idx AND annotator = $annotator AND queue_id = $queue_id
  AND least(a_idx, b_idx) = $lo AND greatest(a_idx, b_idx) = $hi
