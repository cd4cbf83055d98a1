-- One row per stored label of a pool: the pair (prompt, slot A, slot B, in the file's orientation), the
-- label and the annotator.
SELECT prompt_idx, a_idx, b_idx, label, annotator FROM pair_labels WHERE pool_id = $pool_id
