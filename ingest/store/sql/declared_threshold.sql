-- One row: the threshold of the pool's latest calibration that declared one, if any.
SELECT c.threshold FROM calibrations c JOIN pools p USING (pool_id)
WHERE p.name = $pool AND c.threshold IS NOT NULL
ORDER BY c.calibration_id DESC
LIMIT 1
