-- Version 16: verdicts read where they lie (docs/scale.md#verdicts-where-they-lie). `attach-verdicts`
-- registers Parquet files as a read-only verdict source of a pool instead of copying their rows in: a
-- vLLM, Ray or datatrove pipeline's shards stay on disk once, and the database grows by what is below,
-- not by the rows.
--
-- * attached_files: each file with what it was when attached (size, modification time, row count):
--   a file that differs later is refused by name until attached again. `judge` and `format` come
--   from hive folders (judge=J/format=F/), null when the file's own columns name them.
-- * attached_cells: the (judge, format) cells the files hold, with the judge, format and cell run
--   their rows stand under (the cell run's source is 'attach').
-- * attached_parses: each distinct (format, raw) answer of the files parsed once by its format's
--   parser (a format's parser is Python; the rows are then read by SQL alone).
-- The audit reads stored and attached rows through one view (sql/verdict_source.sql).
CREATE TABLE attached_files (
    pool_id  INTEGER NOT NULL,
    path     VARCHAR NOT NULL,       -- absolute
    size     BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    n_rows   BIGINT NOT NULL,
    judge    VARCHAR,
    format   VARCHAR,
    attached_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (pool_id, path)
);
CREATE TABLE attached_cells (
    pool_id     INTEGER NOT NULL,
    judge       VARCHAR NOT NULL,
    format      VARCHAR NOT NULL,
    judge_id    INTEGER NOT NULL,
    format_id   INTEGER NOT NULL,
    kind        VARCHAR NOT NULL,    -- 'pointwise' | 'comparative'
    cell_run_id INTEGER NOT NULL,
    PRIMARY KEY (pool_id, judge, format)
);
CREATE TABLE attached_parses (
    pool_id   INTEGER NOT NULL,
    format_id INTEGER NOT NULL,
    raw       VARCHAR NOT NULL,
    label     VARCHAR,
    value     DOUBLE,
    status    VARCHAR NOT NULL
);
