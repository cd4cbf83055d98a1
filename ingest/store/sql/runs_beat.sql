-- A live run's heartbeat, with its latest progress; a run already closed is left as it was closed.
UPDATE runs SET heartbeat_at = $now, progress = coalesce($progress, progress)
WHERE run_id = $run_id AND status IN ('queued', 'running')
