-- Stores accept/reject labels of a pool, one row per annotator's label of a candidate, from the frame
-- registered as accept_label_rows (an earlier label of the same annotator and candidate is replaced).
INSERT OR REPLACE INTO accept_labels (pool_id, prompt_idx, cand_idx, label, annotator, source, source_file,
                                      source_sha256, line)
SELECT pool_id, prompt_idx, cand_idx, label, annotator, source, source_file, source_sha256, line
FROM accept_label_rows
