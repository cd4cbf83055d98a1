-- One row per (pool, jury) that has the judge of cell run $cell_run_id among its members, in that
-- cell run's pool: what a finished cell run of a member may have made stale.
SELECT DISTINCT jm.pool_id, jm.judge_id
FROM cell_runs r
JOIN jury_members jm ON jm.pool_id = r.pool_id AND jm.member_id = r.judge_id
WHERE r.cell_run_id = $cell_run_id
