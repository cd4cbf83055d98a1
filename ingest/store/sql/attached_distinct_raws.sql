-- One row per distinct (format, raw answer) of the pool's attached files: what its format's parser reads once.
SELECT DISTINCT c.format_id, r.raw
FROM attached_raw r JOIN attached_cells c ON c.pool_id = r.pool_id AND c.judge = r.judge AND c.format = r.format
WHERE r.pool_id = $pool_id AND r.raw IS NOT NULL
