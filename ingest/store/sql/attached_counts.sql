-- One row: how many files and cells a pool's attached verdict source holds.
SELECT (SELECT count(*) FROM attached_files WHERE pool_id = $pool_id),
       (SELECT count(*) FROM attached_cells WHERE pool_id = $pool_id)
