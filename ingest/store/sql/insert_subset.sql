-- Records a curated subset of a pool: how it was picked (judge, format, decoding, score, policy, rate,
-- seed) and what came of it (counts, cut value, the exported file's hash and path).
INSERT INTO subsets (subset_id, pool_id, name, judge_id, format_id, policy, rate, seed, judge, format, decoding,
                     score, n_eligible, n_selected, n_pick_tied, n_cut_tied, n_heldout_prompts, cut_value,
                     sha256, export_path)
VALUES ($subset_id, $pool_id, $name, $judge_id, $format_id, $policy, $rate, $seed, $judge, $format, $decoding,
        $score, $n_eligible, $n_selected, $n_pick_tied, $n_cut_tied, $n_heldout_prompts, $cut_value,
        $sha256, $export_path)
