-- One row per annotator's label of a pair of two candidates of the pool: the pair as (lo_idx, hi_idx),
-- the annotator, y = 1 / 0.5 / 0 as the label favours lo_idx / ties / favours hi_idx, and the design
-- that drew it where it came through a queue (pi, m = the queue's size, frame = the items it chose
-- among; null for a label from a file).
SELECT l.prompt_idx::BIGINT AS prompt_idx, least(l.a_idx, l.b_idx)::BIGINT AS lo_idx,
       greatest(l.a_idx, l.b_idx)::BIGINT AS hi_idx, l.annotator,
       CASE WHEN l.label = 'tie' THEN 0.5 WHEN (l.label = 'A') = (l.a_idx < l.b_idx) THEN 1.0 ELSE 0.0 END AS y,
       i.pi, (SELECT count(*) FROM label_queue_items c WHERE c.queue_id = q.queue_id) AS m, q.n_frame AS frame
FROM pair_labels l
LEFT JOIN label_queues q ON q.queue_id = l.queue_id
LEFT JOIN label_queue_items i ON i.queue_id = l.queue_id AND i.prompt_idx = l.prompt_idx
     AND least(i.a_idx, i.b_idx) = least(l.a_idx, l.b_idx) AND greatest(i.a_idx, i.b_idx) = greatest(l.a_idx, l.b_idx)
WHERE l.pool_id = $pool_id AND l.a_idx <> l.b_idx
ORDER BY l.queue_id NULLS FIRST, prompt_idx, lo_idx, hi_idx, l.annotator
