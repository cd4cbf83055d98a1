-- One row: the largest cell_run_id in cell_runs (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(cell_run_id), 0) AS largest FROM cell_runs
