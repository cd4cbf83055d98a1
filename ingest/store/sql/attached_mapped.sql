-- One row: whether the pool's attached files were mapped to its ids when attached (any attached_ids row of the
-- pool; an attach made before schema/026 has none and must be made again). LIMIT 1 stops at the first row.
SELECT count(*) > 0 FROM (SELECT 1 FROM attached_ids WHERE pool_id = $pool_id LIMIT 1)
