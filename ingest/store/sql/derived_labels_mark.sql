-- One row: what a pool's human labels are, as counts and a hash of every pair and accept label (who
-- labelled what, which way, from which queue), for the derived results computed from labels (the
-- judges' leaderboard, the label estimates, the style fit's human part); it changes with any label.
SELECT concat_ws(':',
    (SELECT count(*) FROM pair_labels WHERE pool_id = $pool_id),
    (SELECT coalesce(bit_xor(hash(prompt_idx, a_idx, b_idx, label, annotator, coalesce(queue_id, -1))), 0)
     FROM pair_labels WHERE pool_id = $pool_id),
    (SELECT count(*) FROM accept_labels WHERE pool_id = $pool_id),
    (SELECT coalesce(bit_xor(hash(cand_idx, label, annotator, coalesce(queue_id, -1))), 0)
     FROM accept_labels WHERE pool_id = $pool_id)) AS labels_mark
