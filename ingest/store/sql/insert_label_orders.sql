-- Stores, per (annotator, pair) not yet shown to them, whether the pair's greater cand_idx is shown as
-- Response A, from the frame registered as order_rows (an order already stored is kept).
INSERT INTO label_orders (pool_id, annotator, prompt_idx, lo_idx, hi_idx, hi_first)
SELECT DISTINCT ON (lo_idx, hi_idx) pool_id, annotator, prompt_idx, lo_idx, hi_idx, hi_first FROM order_rows o
WHERE NOT EXISTS (SELECT 1 FROM label_orders l WHERE l.pool_id = o.pool_id AND l.annotator = o.annotator
                  AND l.lo_idx = o.lo_idx AND l.hi_idx = o.hi_idx)
