-- One row per annotator's accept/reject label of a candidate of the pool: cand_idx, the annotator,
-- y = 1 for accept and 0 for reject, and the design that drew it where it came through a queue (pi,
-- m = the queue's size, frame = the items it chose among; null for a label from a file).
SELECT l.prompt_idx::BIGINT AS prompt_idx, l.cand_idx::BIGINT AS cand_idx, l.annotator,
       CASE WHEN l.label = 'accept' THEN 1.0 ELSE 0.0 END AS y,
       i.pi, (SELECT count(*) FROM label_queue_items c WHERE c.queue_id = q.queue_id) AS m, q.n_frame AS frame
FROM accept_labels l
LEFT JOIN label_queues q ON q.queue_id = l.queue_id
LEFT JOIN label_queue_items i ON i.queue_id = l.queue_id AND i.cand_idx = l.cand_idx
WHERE l.pool_id = $pool_id
ORDER BY l.queue_id NULLS FIRST, cand_idx, l.annotator
