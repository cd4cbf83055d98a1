-- Makes the audit's verdict sources over the stored verdicts and the rows of the attached files (attached_raw.sql's
-- attached_rows), as the verdicts table holds them.
-- verdict_values_all: one row per judge call, stored or attached, with its prompt and candidates and what the audit
-- scores it by (decoding, sample, value, expected), without its answer's text: an attached call is its row of
-- attached_ids alone, which keeps its ids and value since its attach (schema/026, 030), so reading it opens no
-- file (a cell's scores and counts per judging). Only the rows of the pools whose files are intact (the files
-- named with this connection's list, set_attached_files.sql): a pool with a changed file is left out, as it is
-- of verdict_source_all, by its judgings (a cell run is one pool's: the few judgings are filtered, not every
-- row). An attached call carries no probability-weighted value (expected).
CREATE OR REPLACE TEMP VIEW verdict_values_all AS
SELECT pool_id, judge_id, format_id, decoding, sample, prompt_idx, a_idx, b_idx, swapped, value, expected
FROM verdicts
UNION ALL
SELECT m.pool_id, c.judge_id, c.format_id, m.decoding, m.sample, m.prompt_idx, m.a_idx, m.b_idx, m.swapped, m.value,
       NULL::DOUBLE AS expected
FROM attached_ids m
JOIN (SELECT cell_run_id, judge_id, format_id FROM attached_judgings
      WHERE list_contains(getvariable('attached_pools'), pool_id)) c ON c.cell_run_id = m.cell_run_id;
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
