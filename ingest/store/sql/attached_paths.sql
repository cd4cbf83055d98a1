-- One row per attached file of a pool: its path, for the derived results' fingerprint (its size and
-- modification time on disk now).
SELECT path FROM attached_files WHERE pool_id = $pool_id ORDER BY path
