-- Makes the audit's verdict sources over the stored verdicts and the rows of the attached files (attached_raw.sql's
-- attached_rows), as the verdicts table holds them. attached_calls: one row per attached call with its judging's
-- judge, format and cell run (attached_judgings.sql's attached_file_judgings, joined on the file's place in the
-- list, so a filter on a judging reads only the files that can hold it) and each answer's parse (the cell run's
-- attached.parses, made once by its format's parser when attached), and the key of its ids: its file's pool and
-- file_no (from the lists set with the files, not from the judging: DuckDB then never joins the ids to the
-- judgings' parses before the rows) and its row.
CREATE OR REPLACE TEMP VIEW attached_calls AS
SELECT c.cell_run_id, c.pool_id, c.judge_id, c.format_id, coalesce(r.decoding, 'greedy') AS decoding,
       coalesce(r.sample, 0)::INTEGER AS sample, r.raw, x.answer, x.value,
       CASE WHEN r.raw IS NULL AND r.error IS NOT NULL THEN 'failed' WHEN r.raw IS NULL THEN 'empty'
            ELSE x.status END AS status,
       r.error, 1 AS attempts, r.latency_ms::DOUBLE AS latency_ms, r.tokens_in::INTEGER AS tokens_in,
       r.tokens_out::INTEGER AS tokens_out, r.pool_id AS file_pool, r.file_no, r.file_row
FROM attached_rows r
JOIN attached_file_judgings c ON c.file_index = r.file_index AND c.judge = coalesce(c.hive_judge, r.file_judge)
                          AND c.format = coalesce(c.hive_format, r.file_format)
LEFT JOIN (SELECT cell_run_id, unnest(attached.parses, recursive := true)
           FROM cell_runs WHERE attached IS NOT NULL) x ON x.cell_run_id = c.cell_run_id AND x.raw = r.raw;
-- verdict_calls_all: one row per judge call, stored or attached, without the prompt and candidates (counts per
-- judging, parse rates, latencies): an attached call needs no join to its ids here.
CREATE OR REPLACE TEMP VIEW verdict_calls_all AS
SELECT * EXCLUDE (prompt_idx, a_idx, b_idx, swapped) FROM verdicts
UNION ALL BY NAME
SELECT * EXCLUDE (file_pool, file_no, file_row) FROM attached_calls;
-- verdict_source_all: one row per judge call with every column of the verdicts table: an attached call's prompt
-- and candidates are the ids the attach mapped its row's names to (attached_ids, schema/026), joined on integers
-- (the pool, the file's place among the pool's files, the row): a filter on the prompts narrows the ids read and,
-- through the row numbers, the files' row groups.
CREATE OR REPLACE TEMP VIEW verdict_source_all AS
SELECT * FROM verdicts
UNION ALL BY NAME
SELECT a.* EXCLUDE (file_pool, file_no, file_row), m.prompt_idx, m.a_idx, m.b_idx, m.swapped
FROM attached_calls a
JOIN attached_ids m ON m.pool_id = a.file_pool AND m.file_no = a.file_no AND m.file_row = a.file_row;
