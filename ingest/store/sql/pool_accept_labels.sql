-- One row per stored accept/reject label of a pool: the candidate, the annotator and the label.
SELECT cand_idx, annotator, label FROM accept_labels WHERE pool_id = $pool_id
