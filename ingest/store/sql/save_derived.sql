-- Replaces a pool's derived result of this name and parameters by a new computation (one row each).
DELETE FROM derived_results WHERE pool_id = $pool_id AND name = $name AND params_json = $params_json;
INSERT INTO derived_results (pool_id, name, params_json, fingerprint, seconds, n_verdicts, payload)
VALUES ($pool_id, $name, $params_json, $fingerprint, $seconds, $n_verdicts, $payload);
