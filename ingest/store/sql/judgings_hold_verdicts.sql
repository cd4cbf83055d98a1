-- One row when the database holds any verdict of the given pools, judges and formats (lists); none otherwise.
SELECT 1 FROM verdicts
WHERE list_contains($pool_ids, pool_id) AND list_contains($judge_ids, judge_id) AND list_contains($format_ids, format_id)
LIMIT 1
