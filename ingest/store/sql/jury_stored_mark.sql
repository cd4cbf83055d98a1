-- One row: the fingerprint of the members' verdicts a jury's rows were last combined from (null: never).
SELECT mark FROM juries WHERE pool_id = $pool_id AND judge_id = $judge_id
