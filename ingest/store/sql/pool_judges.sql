-- One row per (pool, judge) with at least one verdict: their names.
SELECT p.name AS pool, j.name AS judge
FROM (SELECT DISTINCT pool_id, judge_id FROM verdicts) v
JOIN pools p USING (pool_id) JOIN judges j USING (judge_id)
ORDER BY 1, 2
