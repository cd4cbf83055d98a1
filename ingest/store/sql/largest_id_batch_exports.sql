-- One row: the largest export_id in batch_exports (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(export_id), 0) AS largest FROM batch_exports
