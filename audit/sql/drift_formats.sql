-- The formats a judge ($judge_id) holds verdicts of in the pool, by name (the name a drift compares by), and
-- the least and greatest id of the format rows of that name it or the other judge ($against_id) answered in.
-- The judgings (judge, format row) are found first, from the plain id columns, and then named.
SELECT f.name, min(v.format_id) AS lo, max(v.format_id) AS hi
FROM (SELECT DISTINCT judge_id, format_id FROM verdict_source
      WHERE pool_id = $pool_id AND judge_id IN ($judge_id, $against_id)) v
JOIN formats f USING (format_id)
GROUP BY f.name
HAVING bool_or(v.judge_id = $judge_id)
ORDER BY f.name
