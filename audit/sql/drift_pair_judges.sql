-- The number of the pool's ($pool_id) judges, juries left out, with at least one verdict on it: up to 64,
-- drift_pairs.sql gives each a bit of a mask.
SELECT count(*)::BIGINT AS n
FROM judges
WHERE provider <> 'jury' AND judge_id IN (SELECT DISTINCT judge_id FROM verdict_source WHERE pool_id = $pool_id)
