-- One row: a jury's derived verdicts in the pool, and how many of them parsed.
SELECT count(*), count(value) FROM verdicts WHERE pool_id = $pool_id AND judge_id = $judge_id
