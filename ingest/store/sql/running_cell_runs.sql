-- One row: how many cell runs of a (pool, judge) are still 'running'.
SELECT count(*) FROM cell_runs WHERE pool_id = $pool_id AND judge_id = $judge_id AND status = 'running'
