-- One row per judge named $names that has verdicts in the pool: its name, id and provider (the
-- candidates for a jury's members).
-- Verdicts stored or attached (verdict_source).
SELECT j.name, j.judge_id, j.provider
FROM judges j
WHERE list_contains($names, j.name)
  AND EXISTS (SELECT 1 FROM verdict_source v WHERE v.pool_id = $pool_id AND v.judge_id = j.judge_id)
