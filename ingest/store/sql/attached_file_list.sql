-- One row per attached file of every pool: what it was when attached (size, modification time, row count) and
-- the judge and format its hive folders name (each attached cell run of the pool lists the same files).
SELECT DISTINCT r.pool_id, p.name AS pool, f.path, f.size, f.mtime_ns, f.n_rows, f.judge, f.format
FROM (SELECT pool_id, unnest(attached.files) AS f FROM cell_runs WHERE attached IS NOT NULL) r
JOIN pools p ON p.pool_id = r.pool_id
ORDER BY r.pool_id, f.path
