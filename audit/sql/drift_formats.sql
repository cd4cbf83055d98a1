-- The formats a judge ($judge_id) holds verdicts of in the pool, by name (the name a drift compares by), and
-- the least and greatest id of the format rows of that name it or the other judge ($against_id) answered in.
SELECT f.name, min(v.format_id) AS lo, max(v.format_id) AS hi
FROM verdict_source v JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND v.judge_id IN ($judge_id, $against_id)
GROUP BY f.name
HAVING bool_or(v.judge_id = $judge_id)
ORDER BY f.name
