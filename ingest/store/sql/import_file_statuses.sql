-- The statuses of the verdicts the given cell runs ($cell_run_ids) of a pool hold, and how many of each.
SELECT status, count(*) FROM verdicts
WHERE pool_id = $pool_id AND list_contains($cell_run_ids, cell_run_id)
GROUP BY status
