-- One row per stored human label of the pool: the pair in the label's orientation (a_idx, b_idx),
-- the label ('A' = a_idx is better, 'B' = b_idx, 'tie'), who gave it, and its place in its file.
SELECT prompt_idx, a_idx, b_idx, label, annotator, source, line
FROM pair_labels
WHERE pool_id = $pool_id
ORDER BY source_file, line
