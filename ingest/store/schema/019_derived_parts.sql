-- Version 19: derived results stored in parts, one per judge. A result computed cell by cell (the
-- audit's cells, slot bias, rankings, ...) is stored as one part per judge, each under the fingerprint
-- of that judge's cell runs, verdicts and attached files alone, and put together when read: adding one
-- judge to a large pool computes that judge's part, not the pool's. `part` is the judge's name, or ''
-- for a result stored whole (of the pool, or of the pool's candidates alone).
--
-- The primary key gains `part`, so the table is made again; every stored result moves over as a whole
-- (part ''), as it was.
CREATE TABLE derived_results_parts (
    pool_id     INTEGER NOT NULL,
    name        VARCHAR NOT NULL,     -- the result: 'cells', 'bias', 'positions', ...
    params_json VARCHAR NOT NULL,     -- its arguments after the pool, as JSON ('[]' for none)
    part        VARCHAR NOT NULL,     -- the judge whose cells it holds, or '' for the whole result
    fingerprint VARCHAR NOT NULL,
    computed_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    seconds     DOUBLE NOT NULL,
    n_verdicts  BIGINT NOT NULL,
    payload     BLOB NOT NULL,        -- the polars frame, as Parquet
    PRIMARY KEY (pool_id, name, params_json, part)
);
INSERT INTO derived_results_parts (pool_id, name, params_json, part, fingerprint, computed_at, seconds, n_verdicts, payload)
SELECT pool_id, name, params_json, '', fingerprint, computed_at, seconds, n_verdicts, payload FROM derived_results;
DROP TABLE derived_results;
ALTER TABLE derived_results_parts RENAME TO derived_results;
