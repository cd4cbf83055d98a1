-- One row per judging of a pool (a judge and a format with a cell run in it), named: what the cells of
-- that judging are computed from, as counts and latest marks (its cell runs and their statuses, its
-- stored verdicts and parsed verdicts and their latest write, its attached files as attached and their
-- parses, the schema's version, and the pool's juries: who they are, since a result marks a jury's rows
-- among every judge's), with its stored verdicts' count and its attached files' paths. A judging's mark
-- changes whenever any of these does; another judging's verdicts (another judge's, or another format of
-- the same judge) leave it as it is. With the judge's id (derived results whose part reads the judges before it).
WITH runs AS (
    SELECT judge_id, format_id,
           concat_ws(':', count(*), max(cell_run_id), count(finished_at),
                     sum(CASE WHEN status = 'finished' THEN 1 ELSE 0 END),
                     coalesce(CAST(max(finished_at) AS VARCHAR), '-')) AS runs_mark,
           coalesce(sum(len(attached.parses)), 0) AS n_parses
    FROM cell_runs WHERE pool_id = $pool_id
    GROUP BY judge_id, format_id),
files AS (
    SELECT judge_id, format_id,
           string_agg(DISTINCT concat_ws(':', f.path, f.size, f.mtime_ns, f.n_rows), ';'
                      ORDER BY concat_ws(':', f.path, f.size, f.mtime_ns, f.n_rows)) AS files_mark,
           list(DISTINCT f.path ORDER BY f.path) AS paths
    FROM (SELECT judge_id, format_id, unnest(attached.files) AS f
          FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL)
    GROUP BY judge_id, format_id),
stored AS (
    SELECT judge_id, format_id, count(*) AS n, count(value) AS n_value, max(created_at) AS latest
    FROM verdicts WHERE pool_id = $pool_id
    GROUP BY judge_id, format_id),
panels AS (
    SELECT coalesce(string_agg(concat_ws(':', y.judge_id, y.vote,
                                         (SELECT string_agg(m.member_id::VARCHAR, ',' ORDER BY m.position)
                                          FROM jury_members m WHERE m.pool_id = y.pool_id AND m.judge_id = y.judge_id)),
                               ';' ORDER BY y.judge_id), '-') AS juries_mark
    FROM juries y WHERE y.pool_id = $pool_id)
SELECT j.name AS judge,
       f.name AS format,
       concat_ws('/', (SELECT max(id) FROM _migrations), r.runs_mark, coalesce(s.n, 0), coalesce(s.n_value, 0),
                 coalesce(CAST(s.latest AS VARCHAR), '-'), coalesce(fl.files_mark, '-'), r.n_parses,
                 (SELECT juries_mark FROM panels)) AS mark,
       coalesce(s.n, 0) AS n_verdicts,
       coalesce(fl.paths, []) AS paths,
       r.judge_id
FROM runs r
JOIN judges j ON j.judge_id = r.judge_id
JOIN formats f ON f.format_id = r.format_id
LEFT JOIN stored s ON s.judge_id = r.judge_id AND s.format_id = r.format_id
LEFT JOIN files fl ON fl.judge_id = r.judge_id AND fl.format_id = r.format_id
ORDER BY j.name, f.name
