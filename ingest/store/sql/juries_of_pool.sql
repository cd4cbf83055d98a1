-- One row per jury of the pool: its judge id and name, its vote, and its members' names and ids in
-- the order given.
SELECT y.judge_id, j.name, y.vote,
       list(m.name ORDER BY jm.position) AS members,
       list(jm.member_id ORDER BY jm.position) AS member_ids
FROM juries y
JOIN judges j ON j.judge_id = y.judge_id
JOIN jury_members jm ON jm.pool_id = y.pool_id AND jm.judge_id = y.judge_id
JOIN judges m ON m.judge_id = jm.member_id
WHERE y.pool_id = $pool_id
GROUP BY y.judge_id, j.name, y.vote
ORDER BY j.name
