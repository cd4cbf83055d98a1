-- One row: a jury's verdicts (its members' votes combined) in the pool, and how many of them parsed.
SELECT count(*), count(value) FROM verdicts WHERE pool_id = $pool_id AND judge_id = $judge_id
