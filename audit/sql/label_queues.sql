-- One row per label queue of the pool: its id, annotator, kind, strategy, cell, when it was made,
-- and how many of its items are labelled, skipped and still pending.
SELECT q.queue_id, q.annotator, q.kind, q.strategy, q.judge, q.format, q.decoding, q.active, q.created_at,
       count(*) AS n_items,
       count(*) FILTER (WHERE i.state = 'labelled') AS n_labelled,
       count(*) FILTER (WHERE i.state = 'skipped') AS n_skipped,
       count(*) FILTER (WHERE i.state = 'pending') AS n_pending
FROM label_queues q JOIN label_queue_items i USING (queue_id)
WHERE q.pool_id = $pool_id
GROUP BY ALL
ORDER BY q.queue_id
