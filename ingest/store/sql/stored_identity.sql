-- One row: a stored judge's identity (JSON), by id.
SELECT identity FROM judges WHERE judge_id = $judge_id
