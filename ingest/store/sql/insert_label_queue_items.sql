-- Stores the items of a queue, one row per item in the order shown, from the frame registered as queue_rows.
INSERT INTO label_queue_items (queue_id, pool_id, position, prompt_idx, a_idx, b_idx, cand_idx, pi)
SELECT queue_id, pool_id, position, prompt_idx, a_idx, b_idx, cand_idx, pi FROM queue_rows
