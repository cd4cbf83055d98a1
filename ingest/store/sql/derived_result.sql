-- At most one row: a pool's stored derived result of this name and these parameters, whole (part '') or
-- one judging's part (its fingerprint, the Parquet bytes, what computing it took and on how many verdicts).
SELECT fingerprint, payload, seconds, n_verdicts
FROM derived_results
WHERE pool_id = $pool_id AND name = $name AND params_json = $params_json AND part = $part
