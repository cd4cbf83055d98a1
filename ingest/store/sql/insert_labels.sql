-- Stores labels of a pool, one row per annotator's label of a pair, from the frame registered as label_rows.
INSERT INTO pair_labels (pool_id, prompt_idx, a_idx, b_idx, label, annotator, source, source_file, source_sha256, line)
SELECT pool_id, prompt_idx, a_idx, b_idx, label, annotator, source, source_file, source_sha256, line FROM label_rows
