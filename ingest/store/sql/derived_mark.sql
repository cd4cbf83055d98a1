-- One row: what a pool's derived results are computed from, as counts and latest marks (its cell runs,
-- their statuses, its stored verdicts and parsed verdicts and their latest write, its attached files
-- as attached, the schema's version); it changes whenever any of them does.
SELECT concat_ws('/',
    (SELECT max(id) FROM _migrations),
    (SELECT concat_ws(':', count(*), coalesce(max(cell_run_id), 0), count(finished_at),
                      sum(CASE WHEN status = 'finished' THEN 1 ELSE 0 END),
                      coalesce(CAST(max(finished_at) AS VARCHAR), '-'))
     FROM cell_runs WHERE pool_id = $pool_id),
    count(*), count(v.value), coalesce(CAST(max(v.created_at) AS VARCHAR), '-'),
    (SELECT coalesce(string_agg(a.file, ';' ORDER BY a.file), '-')
     FROM (SELECT DISTINCT concat_ws(':', f.path, f.size, f.mtime_ns, f.n_rows) AS file
           FROM (SELECT unnest(attached.files) AS f FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL)) a),
    (SELECT coalesce(sum(len(attached.parses)), 0) FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL)) AS mark,
    count(*) AS n_verdicts
FROM verdicts v
WHERE v.pool_id = $pool_id
