-- One row per stored judge: its id, name, provider, model and endpoint.
SELECT judge_id, name, provider, model, endpoint FROM judges ORDER BY judge_id
