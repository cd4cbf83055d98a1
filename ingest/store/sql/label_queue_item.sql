-- One row: the queue item at a position, with its queue's pool, annotator and kind and the item
-- (prompt_idx, a_idx, b_idx for a pair; cand_idx for a candidate).
SELECT q.pool_id, q.annotator, q.kind, i.prompt_idx, i.a_idx, i.b_idx, i.cand_idx
FROM label_queue_items i JOIN label_queues q USING (queue_id)
WHERE i.queue_id = $queue_id AND i.position = $position
