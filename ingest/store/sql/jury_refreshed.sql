-- Records that a jury's rows were combined from the members' verdicts with fingerprint $mark.
UPDATE juries SET mark = $mark, refreshed_at = current_timestamp WHERE pool_id = $pool_id AND judge_id = $judge_id
