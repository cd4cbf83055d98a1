-- Closes a cell run with its status; the model id the judge reported, when given, replaces the recorded one.
UPDATE cell_runs SET status = $status, finished_at = current_timestamp, judge_model = coalesce($judge_model, judge_model)
WHERE cell_run_id = $cell_run_id
