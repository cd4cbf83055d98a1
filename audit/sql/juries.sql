-- One row per jury of the pool: its name, its vote (mean | median | majority) and its members'
-- names in the order given.
SELECT j.name AS judge, y.vote, list(m.name ORDER BY jm.position) AS members
FROM juries y
JOIN judges j ON j.judge_id = y.judge_id
JOIN jury_members jm ON jm.pool_id = y.pool_id AND jm.judge_id = y.judge_id
JOIN judges m ON m.judge_id = jm.member_id
WHERE y.pool_id = $pool_id
GROUP BY j.name, y.vote
ORDER BY j.name
