-- Deletes a pool's attached verdict source (detach-verdicts, or attach-verdicts before it attaches anew): its
-- files, parses and cells, and the cell runs those stood under. The files themselves are never touched.
DELETE FROM cell_runs WHERE cell_run_id IN (SELECT cell_run_id FROM attached_cells WHERE pool_id = $pool_id);
DELETE FROM attached_parses WHERE pool_id = $pool_id;
DELETE FROM attached_cells WHERE pool_id = $pool_id;
DELETE FROM attached_files WHERE pool_id = $pool_id;
