-- One row: the judge stored under a name (its id, provider, model, endpoint and identity), if any.
SELECT judge_id, provider, model, endpoint, identity FROM judges WHERE name = $name
