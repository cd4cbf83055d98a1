-- One row per item of a queue, in the order shown: its position and state, the prompt, and what the
-- annotator sees: for a pair the two responses in the order drawn for them (first_idx shown as
-- Response A, second_idx as B; no system names), for a candidate its response (first_idx).
SELECT i.position, i.state, i.a_idx, i.b_idx, i.cand_idx, p.prompt,
       CASE WHEN i.cand_idx IS NOT NULL THEN i.cand_idx WHEN o.hi_first THEN greatest(i.a_idx, i.b_idx)
            ELSE least(i.a_idx, i.b_idx) END AS first_idx,
       CASE WHEN i.cand_idx IS NOT NULL THEN NULL WHEN o.hi_first THEN least(i.a_idx, i.b_idx)
            ELSE greatest(i.a_idx, i.b_idx) END AS second_idx,
       c1.response AS first_response, c2.response AS second_response
FROM label_queue_items i
JOIN label_queues q USING (queue_id)
JOIN prompts p ON p.pool_id = q.pool_id AND p.prompt_idx = i.prompt_idx
LEFT JOIN label_orders o ON o.pool_id = q.pool_id AND o.annotator = q.annotator
     AND o.lo_idx = least(i.a_idx, i.b_idx) AND o.hi_idx = greatest(i.a_idx, i.b_idx)
JOIN candidates c1 ON c1.pool_id = q.pool_id
     AND c1.cand_idx = CASE WHEN i.cand_idx IS NOT NULL THEN i.cand_idx WHEN o.hi_first
                            THEN greatest(i.a_idx, i.b_idx) ELSE least(i.a_idx, i.b_idx) END
LEFT JOIN candidates c2 ON c2.pool_id = q.pool_id AND i.cand_idx IS NULL
     AND c2.cand_idx = CASE WHEN o.hi_first THEN least(i.a_idx, i.b_idx) ELSE greatest(i.a_idx, i.b_idx) END
WHERE i.queue_id = $queue_id
ORDER BY i.position
