-- Makes two temp views on this connection over the cell runs an attach recorded (cell_runs.attached).
-- attached_judgings: one row per judging (judge, format) whose verdicts a pool's attached files hold: its pool, judge and
-- format (names and ids), the format's kind and the cell run.
CREATE OR REPLACE TEMP VIEW attached_judgings AS
SELECT r.pool_id, j.name AS judge, f.name AS format, r.judge_id, r.format_id, f.kind, r.cell_run_id
FROM cell_runs r
JOIN judges j ON j.judge_id = r.judge_id
JOIN formats f ON f.format_id = r.format_id
WHERE r.attached IS NOT NULL;
-- attached_file_judgings: one row per (attached file, judging its rows may hold): a file in hive folders
-- judge=J/format=F/ holds one judging; a file whose columns name them, any judging of its pool. The file's place in
-- the connection's list (file_index, as read_parquet numbers it) and its hive judge and format (null where its
-- columns name them): verdict_source joins the rows on file_index and these, so a query about one judging reads
-- only the files that can hold it.
CREATE OR REPLACE TEMP VIEW attached_file_judgings AS
SELECT f.file_index, f.judge AS hive_judge, f.format AS hive_format, c.*
FROM (SELECT (generate_subscripts(getvariable('attached_files'), 1) - 1)::UBIGINT AS file_index,
             unnest(getvariable('attached_pools')) AS pool_id, unnest(getvariable('attached_judges')) AS judge,
             unnest(getvariable('attached_formats')) AS format) f
JOIN attached_judgings c ON c.pool_id = f.pool_id AND c.judge = coalesce(f.judge, c.judge)
                     AND c.format = coalesce(f.format, c.format);
