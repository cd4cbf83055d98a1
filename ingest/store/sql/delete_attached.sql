-- Deletes a pool's attached verdict source (detach-verdicts, or attach-verdicts before it attaches anew): the
-- cell runs an attach recorded, which hold its files and parses. Their ids were never marked in id_marks (an
-- attach writes one table: schema/018), so the mark is raised to them first: no id is handed out twice.
-- The files themselves are never touched; their rows' mapping to the pool's ids (schema/026) goes too.
UPDATE id_marks SET last_id = greatest(last_id, (SELECT max(cell_run_id) FROM cell_runs
                                                 WHERE pool_id = $pool_id AND attached IS NOT NULL))
WHERE name = 'cell_runs' AND EXISTS (SELECT 1 FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL);
DELETE FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL;
DELETE FROM attached_ids WHERE pool_id = $pool_id;
