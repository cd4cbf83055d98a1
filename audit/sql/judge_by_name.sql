-- The judge of this name, if any: one row (judge_id), or none.
SELECT judge_id FROM judges WHERE name = $judge
