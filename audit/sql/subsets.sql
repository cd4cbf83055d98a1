-- One row per stored curation subset, oldest first: of pool $pool (every pool when null), or the
-- newest whose exported file has the SHA-256 $sha256 (when not null).
SELECT s.subset_id, p.name AS pool, s.name, s.policy, s.judge, s.format, s.decoding, s.score, s.rate, s.seed,
       s.n_eligible, s.n_selected, s.n_pick_tied, s.n_cut_tied, s.n_heldout_prompts, s.cut_value, s.sha256,
       s.export_path, s.created_at
FROM subsets s JOIN pools p ON p.pool_id = s.pool_id
WHERE ($pool IS NULL OR p.name = $pool) AND ($sha256 IS NULL OR s.sha256 = $sha256)
ORDER BY s.subset_id
