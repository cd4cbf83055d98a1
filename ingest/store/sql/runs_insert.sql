-- Records a new run (queued): its kind, key, queue, host, config (its request), output folder and log.
INSERT INTO runs (run_id, kind, status, pool, run_key, queue, host, config, out_dir, log_path, created_at)
VALUES ($run_id, $kind, 'queued', $pool, $run_key, $queue, $host, $config, $out_dir, $log_path, $now)
