-- One row: the largest subset_id in subsets (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(subset_id), 0) AS largest FROM subsets
