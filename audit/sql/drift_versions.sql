-- The versions of one judge ($judge_id) in the pool ($pool_id), per format by name, oldest first: a version is
-- (reported model id, template hash, decoding settings) of the cell run that made a verdict; version numbers
-- count from 1 within each format, by the version's first cell run. With the first and last cell run of each
-- version and the number of verdicts it made.
WITH per_version AS (
    SELECT f.name AS format, r.judge_model, r.template_hash, CAST(r.decoding_settings AS VARCHAR) AS settings,
           min(v.cell_run_id)::BIGINT AS first_cell_run, max(v.cell_run_id)::BIGINT AS last_cell_run,
           count(*)::BIGINT AS n_verdicts
    FROM verdict_source v
    JOIN formats f USING (format_id)
    LEFT JOIN cell_runs r ON r.cell_run_id = v.cell_run_id
    WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id
    GROUP BY ALL
)
SELECT format,
       (row_number() OVER (PARTITION BY format ORDER BY first_cell_run NULLS FIRST, last_cell_run NULLS FIRST))::BIGINT
           AS version,
       judge_model, template_hash, settings, first_cell_run, last_cell_run, n_verdicts
FROM per_version
ORDER BY format, version
