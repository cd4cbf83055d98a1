-- Version 18: an attach writes into one table (the database grows < 1 MB on attach).
-- DuckDB writes every table a checkpoint touches into a block of its own (256 KiB: measured, one
-- table touched = +256 KiB, a table with a key +512 KiB), so 016's three tables plus the cell runs,
-- their id mark, judges and formats cost 2.25 MiB whatever the rows. What an attach keeps now lives
-- in the cell runs it records, one per (judge, format) cell (source 'attach'):
--
-- * cell_runs.attached: null for every other cell run; for an attached cell, `files` (each attached
--   file of the pool as it was when attached: path, size, modification time, row count, and the judge
--   and format its hive folders name, null when the file's columns do) and `parses` (each distinct
--   answer of the cell parsed once by its format's parser: raw, label, value, status).
--
-- The cell's judge and format are the cell run's; its kind is the format's. The rows of 016's tables
-- move here, then the tables go.
ALTER TABLE cell_runs ADD COLUMN attached STRUCT(
    files STRUCT(path VARCHAR, size BIGINT, mtime_ns BIGINT, n_rows BIGINT, judge VARCHAR, format VARCHAR)[],
    parses STRUCT(raw VARCHAR, label VARCHAR, value DOUBLE, status VARCHAR)[]);
UPDATE cell_runs SET attached = {
    'files': (SELECT list({'path': f.path, 'size': f.size, 'mtime_ns': f.mtime_ns, 'n_rows': f.n_rows,
                           'judge': f.judge, 'format': f.format} ORDER BY f.path)
              FROM attached_files f WHERE f.pool_id = c.pool_id),
    'parses': coalesce((SELECT list({'raw': x.raw, 'label': x.label, 'value': x.value, 'status': x.status} ORDER BY x.raw)
                        FROM attached_parses x WHERE x.pool_id = c.pool_id AND x.format_id = c.format_id), [])}
FROM attached_cells c
WHERE c.cell_run_id = cell_runs.cell_run_id;
DROP TABLE attached_parses;
DROP TABLE attached_cells;
DROP TABLE attached_files;
