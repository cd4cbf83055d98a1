-- One row: the largest run_id in runs (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(run_id), 0) AS largest FROM runs
