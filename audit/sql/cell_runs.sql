-- One row per (judge, format, decoding) cell of the pool: how its verdicts were produced, from its
-- latest cell run: the source (score | import), the verbatim template, the recorded decoding settings,
-- the schedule. A cell run's decoding mode is read from its verdicts (cell runs recorded before the mode was
-- a setting hold it only there), else from its settings, else greedy. A cell run whose verdicts hold several
-- decodings (an imported or attached file whose rows name them) gets one of them, any: any_value over its
-- distinct decodings, in the order the hash table gives them. Before, any_value over its calls took the first
-- stored call's on a pool small enough to be read by one thread, and any at scale, where threads race; no
-- column of verdict_source keeps the order the calls were stored in, so neither choice is kept.
-- `modes` groups the pool's calls by integer keys alone: the cell run and its decoding as a small code
-- (decoding_codes.sql; another decoding kept as its text, told by its code alone, so each call's text is compared
-- once), a distinct of a few rows per cell run, named after. any_value of the decoding's text over every
-- call (0.51 s of a refresh at 165M calls) took twice the CPU at 16.5M.
WITH coded AS (
    SELECT DISTINCT cell_run_id, code, CASE WHEN code IS NULL THEN decoding END AS other
    FROM (SELECT cell_run_id, decoding,
                 decoding_code(decoding) AS code
          FROM verdict_source
          WHERE pool_id = $pool_id)
),
modes AS (
    SELECT cell_run_id,
           any_value(decoding_name(code, other)) AS decoding
    FROM coded
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
