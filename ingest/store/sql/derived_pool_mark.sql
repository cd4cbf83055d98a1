-- One row: what a pool's derived results about its candidates alone are computed from (the schema's
-- version, the pool's instance (its file's hash and import time: a pool replaced by one of as many
-- candidates marks anew, so no process keeps the old one's results) and its candidates, which change
-- only when the pool is replaced, and that deletes its derived results), with how many candidates
-- (the next computation's estimate).
SELECT concat_ws('/', (SELECT max(id) FROM _migrations), 'pool',
                 (SELECT concat_ws('@', source_sha256, epoch_us(imported_at)) FROM pools WHERE pool_id = $pool_id),
                 'candidates', count(*)) AS mark,
       count(*) AS n_rows
FROM candidates
WHERE pool_id = $pool_id
