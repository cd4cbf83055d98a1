-- Makes the audit's verdict sources over the stored verdicts and the rows of the attached files (attached_raw.sql's
-- attached_rows), as the verdicts table holds them. attached_calls: one row per attached call with its judging's
-- judge, format and cell run (attached_judgings.sql's attached_file_judgings, joined on the file's place in the
-- list, so a filter on a judging reads only the files that can hold it) and each answer's parse (the cell run's
-- attached.parses, made once by its format's parser when attached).
CREATE OR REPLACE TEMP VIEW attached_calls AS
SELECT c.cell_run_id, c.pool_id, c.judge_id, c.format_id, coalesce(r.decoding, 'greedy') AS decoding,
       coalesce(r.sample, 0)::INTEGER AS sample, r.raw, x.answer, x.value,
       CASE WHEN r.raw IS NULL AND r.error IS NOT NULL THEN 'failed' WHEN r.raw IS NULL THEN 'empty'
            ELSE x.status END AS status,
       r.error, 1 AS attempts, r.latency_ms::DOUBLE AS latency_ms, r.tokens_in::INTEGER AS tokens_in,
       r.tokens_out::INTEGER AS tokens_out
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
SELECT * FROM attached_calls;
-- verdict_source_all: one row per judge call with every column of the verdicts table: an attached call is a row of
-- attached_ids (schema/026), which holds its judging's cell run and the ids its attach mapped the row's names to,
-- joined to its file's row on integers: the file's place in the list (its pool's first file's, plus file_no) and
-- the row, both read_parquet's own columns. The ids, which a filter on the prompts or the judging narrows, are
-- what DuckDB builds its hash table on; read_parquet is handed their files and row range and reads only those
-- files' row groups (measured at 1M candidates: a block of a tenth of the prompts read 1 row group of its cell's
-- 8). Joined the other way (the rows to their judging, then to the ids), every block built its table on all of
-- its cell's rows. The parse is looked up by one key of the judging and the answer (answer_of), which the row has
-- only once joined to its ids: on the answer alone, DuckDB joined the parses to every file's rows first.
CREATE OR REPLACE TEMP VIEW verdict_source_all AS
SELECT * FROM verdicts
UNION ALL BY NAME
SELECT c.cell_run_id, c.pool_id, c.judge_id, c.format_id, coalesce(r.decoding, 'greedy') AS decoding,
       m.prompt_idx, m.a_idx, m.b_idx, m.swapped,
       coalesce(r.sample, 0)::INTEGER AS sample, r.raw, x.answer, x.value,
       CASE WHEN r.raw IS NULL AND r.error IS NOT NULL THEN 'failed' WHEN r.raw IS NULL THEN 'empty'
            ELSE x.status END AS status,
       r.error, 1 AS attempts, r.latency_ms::DOUBLE AS latency_ms, r.tokens_in::INTEGER AS tokens_in,
       r.tokens_out::INTEGER AS tokens_out
FROM attached_ids m
JOIN attached_judgings c ON c.cell_run_id = m.cell_run_id
JOIN attached_rows r ON r.file_index = (getvariable('attached_pool_firsts')[m.pool_id] + m.file_no)::UBIGINT
                    AND r.file_row = m.file_row
LEFT JOIN (SELECT {'run': cell_run_id, 'raw': p.raw} AS answer_of, p.answer, p.value, p.status
           FROM (SELECT cell_run_id, unnest(attached.parses) AS p FROM cell_runs WHERE attached IS NOT NULL))
       x ON x.answer_of = {'run': m.cell_run_id, 'raw': r.raw};
