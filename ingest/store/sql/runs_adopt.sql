-- The process doing a run records itself on the run's row, with the run's config (its request and
-- what the process resolved beside it).
UPDATE runs SET pid = $pid, pid_start = $pid_start, host = $host, pool = coalesce(pool, $pool), config = $config
WHERE run_id = $run_id
