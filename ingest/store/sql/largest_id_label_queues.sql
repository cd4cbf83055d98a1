-- One row: the largest queue_id in label_queues (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(queue_id), 0) AS largest FROM label_queues
