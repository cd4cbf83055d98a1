-- Deletes the accept/reject label one annotator gave a candidate through a queue (undo on the Label page).
DELETE FROM accept_labels
WHERE pool_id = $pool_id AND cand_idx = $cand_idx AND annotator = $annotator AND queue_id = $queue_id
