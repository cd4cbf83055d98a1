-- One row: what a pool's derived results about its candidates alone are computed from (the schema's
-- version and the pool's candidates, which change only when the pool is replaced, and that deletes
-- its derived results), with how many candidates (the next computation's estimate).
SELECT concat_ws('/', (SELECT max(id) FROM _migrations), 'candidates', count(*)) AS mark,
       count(*) AS n_rows
FROM candidates
WHERE pool_id = $pool_id
