-- One row per pool that holds human labels: its name.
SELECT DISTINCT p.name FROM pair_labels JOIN pools p USING (pool_id) ORDER BY 1
