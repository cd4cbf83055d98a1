-- Version 17: derived results (docs/scale.md#derived-results-computed-once-read-by-every-session). The
-- audit's per-cell results that the dashboard's pages read (audit cells, slot bias, positions, score
-- levels, ...) are stored once computed, so a new session, or a restarted server, reads them instead of
-- reading every verdict again.
--
-- One row per (pool, result name, parameters): the result as Parquet bytes, with the fingerprint of
-- what it was computed from (the pool's cell runs, its verdicts' counts and latest write, its attached
-- files as they are on disk, the schema's version). A row whose fingerprint is not the current one is
-- stale: the next reader computes it anew, once, and replaces it. `seconds` and `n_verdicts` are what
-- the computation took and on how many verdicts, for the next one's estimate of the time left.
CREATE TABLE derived_results (
    pool_id     INTEGER NOT NULL,
    name        VARCHAR NOT NULL,     -- the result: 'cells', 'bias', 'positions', ...
    params_json VARCHAR NOT NULL,     -- its arguments after the pool, as JSON ('[]' for none)
    fingerprint VARCHAR NOT NULL,
    computed_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    seconds     DOUBLE NOT NULL,
    n_verdicts  BIGINT NOT NULL,
    payload     BLOB NOT NULL,        -- the polars frame, as Parquet
    PRIMARY KEY (pool_id, name, params_json)
);
