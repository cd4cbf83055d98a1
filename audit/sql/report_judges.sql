-- One row per judge with a stored verdict in pool $pool_id: how it answered (provider 'openai' |
-- 'local' | 'fake' (a simulated judge, no model) | 'imported'), its model and endpoint (stored
-- without credentials).
-- The judges with a verdict are found by id first, a distinct over one integer column of the pool's calls
-- (verdict_values: the same calls as verdict_source, an attached file's rows without opening the file), and
-- the few judges' rows are semi-joined to them; joined to every call, the judges' rows were carried through
-- every call and grouped by the name's text (0.59 s of a refresh at 165M calls).
SELECT j.name AS judge, any_value(j.provider) AS provider, any_value(j.model) AS model,
       any_value(j.endpoint) AS endpoint
FROM judges j
SEMI JOIN (SELECT DISTINCT judge_id FROM verdict_values WHERE pool_id = $pool_id) v ON v.judge_id = j.judge_id
GROUP BY j.name
ORDER BY j.name
