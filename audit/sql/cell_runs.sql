-- One row per (judge, format) cell of the pool: how its verdicts were produced, from its latest
-- run: the source (score | import), the verbatim template, the decoding settings, the schedule.
SELECT judge, format, source, template, decoding, schedule, judge_model, n_runs
FROM (
    SELECT j.name AS judge, f.name AS format, r.source, r.template, r.decoding, r.schedule,
           r.judge_model, count(*) OVER (PARTITION BY r.judge_id, r.format_id) AS n_runs,
           row_number() OVER (PARTITION BY r.judge_id, r.format_id ORDER BY r.run_id DESC) AS latest
    FROM runs r
    JOIN judges j USING (judge_id)
    JOIN formats f USING (format_id)
    WHERE r.pool_id = $pool_id
)
WHERE latest = 1
ORDER BY judge, format
