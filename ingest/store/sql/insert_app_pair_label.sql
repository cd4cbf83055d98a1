-- Stores one annotator's label of a pair given on the Label page, with the queue it answered.
INSERT INTO pair_labels (pool_id, prompt_idx, a_idx, b_idx, label, annotator, source, queue_id)
VALUES ($pool_id, $prompt_idx, $a_idx, $b_idx, $label, $annotator, 'app', $queue_id)
