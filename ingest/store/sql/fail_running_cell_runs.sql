-- Marks as failed, saying why, the cell runs of a (pool, judge) still 'running' (their process is gone).
UPDATE cell_runs SET status = 'failed', finished_at = current_timestamp, notes = concat_ws('; ', notes, $reason)
WHERE pool_id = $pool_id AND judge_id = $judge_id AND status = 'running'
