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
-- (drift_cells.sql and drift_moved.sql read the same pairs; their WITH clauses are the same.)
WITH answers AS (
    SELECT v.judge_id, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample, coalesce(v.cell_run_id, -1) AS run,
           struct_pack(reading := coalesce(v.answer, v.status),
                       s := (v.value - f.value_lo) / nullif(f.value_hi - f.value_lo, 0)) AS answer,
           struct_pack(m := r.judge_model, t := r.template_hash, s := CAST(r.decoding_settings AS VARCHAR)) AS version
    FROM verdict_source v
    JOIN formats f USING (format_id)
    LEFT JOIN cell_runs r ON r.cell_run_id = v.cell_run_id
    WHERE v.pool_id = $pool_id AND v.judge_id IN ($judge_id, $against_id) AND v.format_id BETWEEN $lo AND $hi
      AND f.name = $format
), latest AS (
    SELECT CASE WHEN $versions THEN struct_pack(m := $new_model::VARCHAR, t := $new_template::VARCHAR,
                                                s := $new_settings::VARCHAR)
                ELSE arg_max(version, run) END AS version
    FROM answers WHERE judge_id = $judge_id
), new AS (
    SELECT decoding, prompt_idx, a_idx, b_idx, sample, arg_max(answer, run) AS answer
    FROM answers WHERE judge_id = $judge_id AND version IS NOT DISTINCT FROM (SELECT version FROM latest)
    GROUP BY ALL
), old AS (
    SELECT decoding, prompt_idx, a_idx, b_idx, sample, arg_max(answer, run) AS answer
    FROM answers WHERE judge_id = $against_id
      AND (NOT $versions OR version IS NOT DISTINCT FROM struct_pack(m := $old_model::VARCHAR,
                                                                     t := $old_template::VARCHAR,
                                                                     s := $old_settings::VARCHAR))
    GROUP BY ALL
), pairs AS (
    SELECT c.decoding, c.prompt_idx, c.a_idx, c.b_idx, c.sample, o.answer.reading AS reading_old,
           c.answer.reading AS reading, o.answer.s AS s_old, c.answer.s AS s, c.answer.s - o.answer.s AS change,
           c.answer.reading <> o.answer.reading AS changed
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
