-- One row per background run that matches every filter given (a NULL filter matches any run),
-- oldest first; $live keeps only the runs still queued or running.
SELECT run_id, kind, status, pool, run_key, queue, pid, pid_start, host, created_at, started_at, finished_at,
       heartbeat_at, cancel_requested_at, config, out_dir, log_path, progress, error
FROM runs
WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($kind IS NULL OR kind = $kind)
  AND ($pool IS NULL OR pool = $pool)
  AND ($run_key IS NULL OR run_key = $run_key)
  AND ($queue IS NULL OR queue = $queue)
  AND (NOT $live OR status IN ('queued', 'running'))
ORDER BY run_id
