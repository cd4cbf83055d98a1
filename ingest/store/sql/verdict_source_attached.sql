-- Makes the audit's verdict sources over the stored verdicts and the rows of the attached files (attached_raw.sql's
-- attached_rows), as the verdicts table holds them. attached_calls: one row per attached call with its judging's
-- judge, format and cell run (attached_judgings.sql's attached_file_judgings, joined on the file's place in the
-- list, so a filter on a judging reads only the files that can hold it) and each answer's parse (the cell run's
-- attached.parses, made once by its format's parser when attached), and the key of its ids: its file's place in
-- the list and its row, both read_parquet's own columns.
CREATE OR REPLACE TEMP VIEW attached_calls AS
SELECT c.cell_run_id, c.pool_id, c.judge_id, c.format_id, coalesce(r.decoding, 'greedy') AS decoding,
       coalesce(r.sample, 0)::INTEGER AS sample, r.raw, x.answer, x.value,
       CASE WHEN r.raw IS NULL AND r.error IS NOT NULL THEN 'failed' WHEN r.raw IS NULL THEN 'empty'
            ELSE x.status END AS status,
       r.error, 1 AS attempts, r.latency_ms::DOUBLE AS latency_ms, r.tokens_in::INTEGER AS tokens_in,
       r.tokens_out::INTEGER AS tokens_out, r.file_index, r.file_row
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
SELECT * EXCLUDE (file_index, file_row) FROM attached_calls;
-- verdict_source_all: one row per judge call with every column of the verdicts table: an attached call's prompt
-- and candidates are the ids the attach mapped its row's names to (attached_ids, schema/026), joined on integers.
-- The ids are keyed by the files' own columns first (attached_file_keys: file_index for the pool and file_no), so
-- DuckDB builds its hash table on the ids, which a filter on the prompts narrows, and hands their file_index and
-- row range to read_parquet, which then reads only those files' row groups (measured at 1M candidates: a block of
-- a tenth of the prompts read 1 row group of its cell's 8; joined on the pool and file_no instead, every block
-- built its table on all of its cell's rows).
CREATE OR REPLACE TEMP VIEW verdict_source_all AS
SELECT * FROM verdicts
UNION ALL BY NAME
SELECT a.* EXCLUDE (file_index, file_row), m.prompt_idx, m.a_idx, m.b_idx, m.swapped
FROM attached_calls a
JOIN (SELECT k.file_index, i.file_row, i.prompt_idx, i.a_idx, i.b_idx, i.swapped
      FROM attached_ids i JOIN attached_file_keys k ON k.pool_id = i.pool_id AND k.file_no = i.file_no) m
  ON m.file_index = a.file_index AND m.file_row = a.file_row;
