-- One row per attached file of every pool: what it was when attached (size, modification time, row count).
SELECT f.pool_id, p.name AS pool, f.path, f.size, f.mtime_ns, f.n_rows
FROM attached_files f JOIN pools p USING (pool_id)
ORDER BY f.pool_id, f.path
