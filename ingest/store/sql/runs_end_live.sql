-- Ends a live run from outside its process (dead, hung, refused or cancelled), keeping an error
-- already recorded; a run already closed is left as it was.
UPDATE runs SET status = $status, error = coalesce(error, $error), finished_at = $now
WHERE run_id = $run_id AND status IN ('queued', 'running')
