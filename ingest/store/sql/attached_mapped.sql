-- One row: whether the pool's attached files were mapped to its ids, and their rows' values kept, when attached
-- (an attached_ids row of the pool with its decoding: an attach made before schema/026 has no row, one made
-- before schema/030 rows without it, and must be made again). LIMIT 1 stops at the first row.
SELECT count(*) > 0 FROM (SELECT 1 FROM attached_ids WHERE pool_id = $pool_id AND decoding IS NOT NULL LIMIT 1)
