-- Closes a live run (finished, failed or cancelled) with its error and last progress; the close is
-- final: a run already closed (by a read that found it dead, or by a cancel) is left as it was.
UPDATE runs SET status = $status, error = $error, finished_at = $now, heartbeat_at = $now,
                progress = coalesce($progress, progress)
WHERE run_id = $run_id AND status IN ('queued', 'running')
