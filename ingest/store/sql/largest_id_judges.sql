-- One row: the largest judge_id in judges (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(judge_id), 0) AS largest FROM judges
