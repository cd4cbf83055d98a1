-- The versions of one judge ($judge_id) in the pool ($pool_id), per format by name, oldest first: a version is
-- (reported model id, template hash, decoding settings) of the cell run that made a verdict; version numbers
-- count from 1 within each format, by the version's first cell run. With the first and last cell run of each
-- version and the number of verdicts it made. The verdicts are counted per format row and cell run first (plain
-- id columns), and those few rows then named.
WITH per_run AS (
    SELECT format_id, cell_run_id, count(*) AS n
    FROM verdict_source
    WHERE pool_id = $pool_id AND judge_id = $judge_id
    GROUP BY ALL
), per_version AS (
    SELECT f.name AS format, r.judge_model, r.template_hash, CAST(r.decoding_settings AS VARCHAR) AS settings,
           min(v.cell_run_id)::BIGINT AS first_cell_run, max(v.cell_run_id)::BIGINT AS last_cell_run,
           sum(v.n)::BIGINT AS n_verdicts
    FROM per_run v
    JOIN formats f USING (format_id)
    LEFT JOIN cell_runs r ON r.cell_run_id = v.cell_run_id
    GROUP BY ALL
)
SELECT format,
       (row_number() OVER (PARTITION BY format ORDER BY first_cell_run NULLS FIRST, last_cell_run NULLS FIRST))::BIGINT
           AS version,
       judge_model, template_hash, settings, first_cell_run, last_cell_run, n_verdicts
FROM per_version
ORDER BY format, version
