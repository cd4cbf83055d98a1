-- Per decoding of one format of a drift against another judge: the calls both answered (pairs, below),
-- those whose reading changed, those scored on both sides with the mean absolute change of the normalised
-- score, and those that moved (reading or score changed: what drift_moved.sql lists).
-- pairs: the calls of one format ($format, by name; the ids of the format rows of that name lie
-- between $lo and $hi) that a judge's ($judge_id) latest version of it (the version of its newest cell run:
-- reported model id, template hash, decoding settings) and another judge ($against_id, every version) both
-- answered, or, with $versions, that two versions of one judge ($judge_id = $against_id) both answered (the
-- newer: $new_model, $new_template, $new_settings; the older: $old_model, ...), one row each: both
-- readings (answer, or the parse status where none parsed) and normalised scores
-- s = (value - value_lo) / (value_hi - value_lo), the change s - s_old, and whether the reading changed.
-- A call answered in more than one run (format rows of the same name) counts with its newest.
-- The verdicts are read once, as plain columns: a version is found per cell run (runs: the distinct runs of the
-- two judges, a handful), each side is the rows of its runs, and the sides are joined on the call. One format
-- row ($lo = $hi) holds one row per judge and call (the store's rule), so a side is its rows as they are; over
-- several format rows of one name a side keeps each call's newest row (the aggregate, only then).
-- (drift_cells.sql and drift_moved.sql read the same pairs; their WITH clauses are the same.)
WITH calls AS NOT MATERIALIZED (   -- read by each side where it is used (its filters pushed into the scan)
    SELECT v.judge_id, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample, coalesce(v.cell_run_id, -1) AS run,
           coalesce(v.answer, v.status) AS reading, (v.value - f.value_lo) / nullif(f.value_hi - f.value_lo, 0) AS s
    FROM verdict_source v
    JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND v.judge_id IN ($judge_id, $against_id) AND v.format_id BETWEEN $lo AND $hi
      AND f.name = $format
), runs AS (
    SELECT d.judge_id, d.run,
           struct_pack(m := r.judge_model, t := r.template_hash, s := CAST(r.decoding_settings AS VARCHAR)) AS version
    FROM (SELECT DISTINCT judge_id, run FROM calls) d
    LEFT JOIN cell_runs r ON r.cell_run_id = d.run
), latest AS (
    SELECT CASE WHEN $versions THEN struct_pack(m := $new_model::VARCHAR, t := $new_template::VARCHAR,
                                                s := $new_settings::VARCHAR)
                ELSE arg_max(version, run) END AS version
    FROM runs WHERE judge_id = $judge_id
), sides AS (
    SELECT judge_id, run,
           judge_id = $judge_id AND version IS NOT DISTINCT FROM (SELECT version FROM latest) AS is_new,
           judge_id = $against_id AND (NOT $versions OR version IS NOT DISTINCT FROM
               struct_pack(m := $old_model::VARCHAR, t := $old_template::VARCHAR, s := $old_settings::VARCHAR)) AS is_old
    FROM runs
), new AS (
    SELECT c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample, c.reading, c.s
    FROM calls c JOIN sides d ON d.judge_id = c.judge_id AND d.run = c.run
    WHERE d.is_new AND $lo = $hi
    UNION ALL
    SELECT c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample, arg_max_null(c.reading, c.run), arg_max_null(c.s, c.run)
    FROM calls c JOIN sides d ON d.judge_id = c.judge_id AND d.run = c.run
    WHERE d.is_new AND $lo < $hi
    GROUP BY c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample
), old AS (
    SELECT c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample, c.reading, c.s
    FROM calls c JOIN sides d ON d.judge_id = c.judge_id AND d.run = c.run
    WHERE d.is_old AND $lo = $hi
    UNION ALL
    SELECT c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample, arg_max_null(c.reading, c.run), arg_max_null(c.s, c.run)
    FROM calls c JOIN sides d ON d.judge_id = c.judge_id AND d.run = c.run
    WHERE d.is_old AND $lo < $hi
    GROUP BY c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample
), pairs AS (
    SELECT c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample, o.reading AS reading_old, c.reading,
           o.s AS s_old, c.s, c.s - o.s AS change, c.reading <> o.reading AS changed
    FROM new c
    JOIN old o ON o.decoding = c.decoding AND o.prompt_idx = c.prompt_idx AND o.a_idx = c.a_idx
              AND o.b_idx IS NOT DISTINCT FROM c.b_idx AND o.sample = c.sample
)
SELECT decoding, count(*)::BIGINT AS n, coalesce(sum(changed::INT), 0)::BIGINT AS n_changed,
       count(change)::BIGINT AS n_scored, avg(abs(change)) AS mean_abs_change,
       (count(*) FILTER (WHERE changed OR abs(change) > 1e-12))::BIGINT AS n_moved
FROM pairs
GROUP BY decoding
ORDER BY decoding
