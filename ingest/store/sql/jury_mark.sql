-- One row: the fingerprint of a jury's members' verdicts in the pool (their latest cell run, their
-- sample-0 calls, parsed calls and latest write), which changes whenever a member's verdicts do.
-- Members' calls are read through verdict_source (stored and attached rows).
SELECT concat_ws('/', coalesce(max(v.cell_run_id), 0), count(*), count(v.value),
                 coalesce(CAST(max(v.created_at) AS VARCHAR), '-'),
                 coalesce((SELECT max(r.cell_run_id) FROM cell_runs r JOIN jury_members jm
                           ON jm.pool_id = r.pool_id AND jm.member_id = r.judge_id
                           WHERE jm.pool_id = $pool_id AND jm.judge_id = $judge_id), 0)) AS mark
FROM verdict_source v
JOIN jury_members jm ON jm.pool_id = v.pool_id AND jm.member_id = v.judge_id
WHERE jm.pool_id = $pool_id AND jm.judge_id = $judge_id AND v.sample = 0
