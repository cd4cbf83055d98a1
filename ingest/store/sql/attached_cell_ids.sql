-- One row per judging (judge, format) of the pool that attached files hold: its judge and format ids and names.
SELECT r.judge_id, r.format_id, j.name AS judge, f.name AS format
FROM cell_runs r
JOIN judges j ON j.judge_id = r.judge_id
JOIN formats f ON f.format_id = r.format_id
WHERE r.pool_id = $pool_id AND r.attached IS NOT NULL
ORDER BY judge, format
