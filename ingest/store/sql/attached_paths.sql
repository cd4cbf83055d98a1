-- One row per attached file of a pool: its path, for the derived results' fingerprint (its size and
-- modification time on disk now).
SELECT DISTINCT f.path
FROM (SELECT unnest(attached.files) AS f FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL)
ORDER BY f.path
