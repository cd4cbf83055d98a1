-- Version 5: human labels for calibration (docs/metrics.md#agreement-with-humans-calibrate), and each
-- calibration with the acceptance threshold it declared before it ran, saved with its result.

-- One row per human label of a pair of candidates: `label` 'A' says a_idx is better, 'B' b_idx,
-- 'tie' neither. Several annotators may label the same pair (one row each).
CREATE TABLE labels (
    pool_id       INTEGER NOT NULL,
    prompt_idx    INTEGER NOT NULL,
    a_idx         INTEGER NOT NULL,
    b_idx         INTEGER NOT NULL,
    label         VARCHAR NOT NULL,    -- 'A' | 'B' | 'tie'
    annotator     VARCHAR NOT NULL,    -- '' when the file does not say who labelled
    source        VARCHAR NOT NULL,    -- 'jsonl' | 'mtbench' | 'llmfao'
    source_file   VARCHAR,
    source_sha256 VARCHAR,
    line          INTEGER,             -- the line of the source file
    imported_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);
-- an annotator labels a pair once, whichever way round
CREATE UNIQUE INDEX labels_one_per_annotator ON labels
    (pool_id, prompt_idx, least(a_idx, b_idx), greatest(a_idx, b_idx), annotator);

-- One row per `calibrate` run: the threshold on kappa is written before anything is computed,
-- and the result document is added when the run finishes.
CREATE TABLE calibrations (
    calibration_id INTEGER NOT NULL,
    pool_id        INTEGER NOT NULL,
    threshold      DOUBLE,             -- acceptance threshold on kappa (null: none declared)
    target_width   DOUBLE,             -- the kappa interval width the sample size is planned for
    labels         VARCHAR NOT NULL,   -- 'stored', or the labels file with its sha256
    declared_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at    TIMESTAMP,
    result         JSON
);
INSERT INTO id_marks VALUES ('calibrations', 0);
