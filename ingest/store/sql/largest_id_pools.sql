-- One row: the largest pool_id in pools (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(pool_id), 0) AS largest FROM pools
