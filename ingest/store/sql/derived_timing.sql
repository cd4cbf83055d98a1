-- At most one row: the latest computation of a pool's derived result of this name, whatever its
-- parameters and fingerprint (seconds, n_verdicts), for the estimate of the next one's time.
SELECT seconds, n_verdicts
FROM derived_results
WHERE pool_id = $pool_id AND name = $name
ORDER BY computed_at DESC
LIMIT 1
