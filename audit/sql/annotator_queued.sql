-- One row per item of the annotator's queues in the pool that is still pending (not labelled, not
-- skipped): the item as (prompt_idx, lo_idx, hi_idx) for a pair or cand_idx for a candidate, so a new
-- queue does not draw it again.
SELECT i.prompt_idx::BIGINT AS prompt_idx, least(i.a_idx, i.b_idx)::BIGINT AS lo_idx,
       greatest(i.a_idx, i.b_idx)::BIGINT AS hi_idx, i.cand_idx::BIGINT AS cand_idx, q.kind
FROM label_queue_items i JOIN label_queues q USING (queue_id)
WHERE q.pool_id = $pool_id AND q.annotator = $annotator AND i.state = 'pending'
