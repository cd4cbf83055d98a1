-- Replaces a pool's derived result (or one judging's part of it) of this name and parameters by a new
-- computation (one row each).
DELETE FROM derived_results WHERE pool_id = $pool_id AND name = $name AND params_json = $params_json AND part = $part;
INSERT INTO derived_results (pool_id, name, params_json, part, fingerprint, seconds, n_verdicts, payload)
VALUES ($pool_id, $name, $params_json, $part, $fingerprint, $seconds, $n_verdicts, $payload);
