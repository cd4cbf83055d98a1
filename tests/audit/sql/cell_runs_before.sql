-- One row per (judge, format, decoding) cell of the pool: how its verdicts were produced, from its
-- latest cell run: the source (score | import), the verbatim template, the recorded decoding settings,
-- the schedule. A cell run's decoding mode is read from its verdicts (cell runs recorded before the mode was
-- a setting hold it only there), else from its settings, else greedy.
WITH modes AS (
    SELECT cell_run_id, any_value(decoding) AS decoding
    FROM verdict_source
    WHERE pool_id = $pool_id
    GROUP BY cell_run_id
),
r AS (
    SELECT r.*, coalesce(m.decoding, json_extract_string(r.decoding_settings, '$.mode'), 'greedy') AS mode
    FROM cell_runs r
    LEFT JOIN modes m USING (cell_run_id)
    WHERE r.pool_id = $pool_id
)
SELECT judge, format, decoding, source, template, settings, schedule, judge_model, n_runs
FROM (
    SELECT j.name AS judge, f.name AS format, r.mode AS decoding, r.source, r.template,
           r.decoding_settings AS settings, r.schedule, r.judge_model,
           count(*) OVER (PARTITION BY r.judge_id, r.format_id, r.mode) AS n_runs,
           row_number() OVER (PARTITION BY r.judge_id, r.format_id, r.mode ORDER BY r.cell_run_id DESC) AS latest
    FROM r
    JOIN judges j USING (judge_id)
    JOIN formats f USING (format_id)
)
WHERE latest = 1
ORDER BY judge, format, decoding
