-- One row per judge with a stored verdict in pool $pool_id: how it answered (provider 'openai' |
-- 'local' | 'fake' (a simulated judge, no model) | 'imported'), its model and endpoint (stored
-- without credentials).
SELECT j.name AS judge, any_value(j.provider) AS provider, any_value(j.model) AS model,
       any_value(j.endpoint) AS endpoint
FROM judges j
JOIN verdict_source v ON v.judge_id = j.judge_id
WHERE v.pool_id = $pool_id
GROUP BY j.name
ORDER BY j.name
