-- A queued run's turn has come: it is running from now, and its heartbeat starts now.
UPDATE runs SET status = 'running', started_at = $now, heartbeat_at = $now
WHERE run_id = $run_id AND status = 'queued'
