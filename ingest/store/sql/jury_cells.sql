-- One row per (format, decoding) in which at least one member of the jury has a sample-0 call in
-- the pool: the jury's cells, each one cell run of its own.
SELECT DISTINCT v.format_id, v.decoding
FROM verdicts v
JOIN jury_members jm ON jm.pool_id = v.pool_id AND jm.member_id = v.judge_id
WHERE jm.pool_id = $pool_id AND jm.judge_id = $judge_id AND v.sample = 0
ORDER BY v.format_id, v.decoding
