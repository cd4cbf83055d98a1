-- The verdicts the given cell runs ($cell_run_ids) of a pool hold, by cell run and status. The runs are the
-- newest ($first: the least of their ids), so the zone maps skip the row groups stored before them.
SELECT cell_run_id, status, count(*) FROM verdicts
WHERE pool_id = $pool_id AND cell_run_id >= $first AND list_contains($cell_run_ids, cell_run_id)
GROUP BY cell_run_id, status
