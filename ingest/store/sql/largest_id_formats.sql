-- One row: the largest format_id in formats (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(format_id), 0) AS largest FROM formats
