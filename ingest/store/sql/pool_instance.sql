-- One row: what names a pool's instance in batch ids (its id, name and import time), so that a pool
-- replaced since, or one of another database, names no call of this one.
SELECT pool_id, name, imported_at FROM pools WHERE pool_id = $pool_id
