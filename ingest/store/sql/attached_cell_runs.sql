-- The cell runs of the pool's attached judgings (attached_judgings.sql), in id order: map_ids writes each one's rows
-- of attached_ids in turn.
SELECT cell_run_id FROM attached_judgings WHERE pool_id = $pool_id ORDER BY cell_run_id
