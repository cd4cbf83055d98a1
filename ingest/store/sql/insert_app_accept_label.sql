-- Stores (or replaces) one annotator's accept/reject label of a candidate given on the Label page.
INSERT OR REPLACE INTO accept_labels (pool_id, prompt_idx, cand_idx, label, annotator, source, queue_id)
VALUES ($pool_id, $prompt_idx, $cand_idx, $label, $annotator, 'app', $queue_id)
