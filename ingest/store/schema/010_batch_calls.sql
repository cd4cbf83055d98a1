-- Version 10: batch files (docs/scale.md#past-one-machine-batch-files). `judgeaudit score --batch-out`
-- writes the calls still to make as OpenAI Batch request files instead of making them, and
-- `judgeaudit import-batch` stores the answers that come back, maybe weeks later, from another
-- machine. A result line names its call only by `custom_id`, so the mapping is stored here at
-- export time: a lost manifest loses nothing, and a result line naming no call of this database
-- is counted as unknown, never guessed.

-- One row per export: the judge's identity when the files were written (an import checks that
-- the name still stands for it) and the decoding sent in every request body.
CREATE TABLE batch_exports (
    export_id   INTEGER PRIMARY KEY,
    pool_id     INTEGER NOT NULL,
    judge_id    INTEGER NOT NULL,
    identity    JSON NOT NULL,
    decoding    JSON NOT NULL,
    folder      VARCHAR NOT NULL,
    n_calls     INTEGER NOT NULL,
    files       JSON NOT NULL,        -- [{name, lines, bytes, sha256}]
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per exported call, keyed by its custom_id (a hash of the call key, so the same call has
-- the same id in every export). A call exported again points to its latest export and cell run.
CREATE TABLE batch_calls (
    custom_id   VARCHAR PRIMARY KEY,
    export_id   INTEGER NOT NULL,
    run_id      INTEGER NOT NULL,     -- the export's cell run of the call's format
    pool_id     INTEGER NOT NULL,
    judge_id    INTEGER NOT NULL,
    format_id   INTEGER NOT NULL,
    decoding    VARCHAR NOT NULL,
    prompt_idx  INTEGER NOT NULL,
    a_idx       INTEGER NOT NULL,
    b_idx       INTEGER,
    swapped     BOOLEAN NOT NULL,
    sample      INTEGER NOT NULL
);
