-- The cell runs a dead run left running are failed with it.
UPDATE cell_runs SET status = 'failed', finished_at = current_timestamp
WHERE run_id = $run_id AND status = 'running'
