-- One row per jury of every pool: the pool's name and the jury's name.
SELECT p.name AS pool, j.name AS jury
FROM juries y
JOIN pools p ON p.pool_id = y.pool_id
JOIN judges j ON j.judge_id = y.judge_id
ORDER BY pool, jury
