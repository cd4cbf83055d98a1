-- judgeaudit schema, version 1. Raw facts only; every metric is derived by audit/.
-- No PRIMARY KEY / UNIQUE indexes: store.py is the single writer and enforces keys, which keeps
-- bulk inserts fast and avoids DuckDB's over-eager constraint checks on delete+reinsert.

CREATE TABLE pools (
    pool_id       INTEGER NOT NULL,
    name          VARCHAR NOT NULL,
    source_file   VARCHAR,
    source_sha256 VARCHAR,
    layout        VARCHAR,             -- 'rows' | 'ultrafeedback'
    imported_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE prompts (
    pool_id    INTEGER NOT NULL,
    prompt_idx INTEGER NOT NULL,       -- 0..n_prompts-1, in order of first appearance
    prompt_id  VARCHAR NOT NULL,
    prompt     VARCHAR NOT NULL
);

CREATE TABLE candidates (
    pool_id      INTEGER NOT NULL,
    cand_idx     INTEGER NOT NULL,     -- 0..n_candidates-1 within the pool
    prompt_idx   INTEGER NOT NULL,
    candidate_id VARCHAR NOT NULL,
    position     INTEGER NOT NULL,     -- listing order within the prompt, from 0
    response     VARCHAR NOT NULL,
    reference    DOUBLE,
    model        VARCHAR,
    split        VARCHAR NOT NULL DEFAULT 'pool'
);

CREATE TABLE judges (
    judge_id INTEGER NOT NULL,
    name     VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,         -- 'openai' | 'local' | 'fake' | 'imported'
    model    VARCHAR,
    endpoint VARCHAR,
    settings JSON
);

CREATE TABLE formats (
    format_id INTEGER NOT NULL,
    name      VARCHAR NOT NULL,
    kind      VARCHAR NOT NULL,        -- 'pointwise' | 'comparative'
    pairing   VARCHAR NOT NULL,        -- 'pointwise' | 'anchored' | 'tournament'
    spec      JSON NOT NULL,           -- the full format spec (labels or range, normalisation)
    value_lo  DOUBLE NOT NULL,         -- normalised score = (value - value_lo) / (value_hi - value_lo)
    value_hi  DOUBLE NOT NULL,
    template  VARCHAR,                 -- verbatim prompt template, null for imported-only formats
    spec_hash VARCHAR NOT NULL
);

CREATE TABLE runs (
    run_id        INTEGER NOT NULL,
    pool_id       INTEGER NOT NULL,
    judge_id      INTEGER NOT NULL,
    format_id     INTEGER NOT NULL,
    source        VARCHAR NOT NULL,    -- 'import' | 'score'
    source_file   VARCHAR,
    template      VARCHAR,             -- verbatim, as used
    template_hash VARCHAR,
    decoding      JSON,
    judge_model   VARCHAR,             -- the model id the judge reported
    schedule      VARCHAR,
    seed          INTEGER,
    notes         VARCHAR,
    status        VARCHAR NOT NULL,    -- 'running' | 'finished' | 'failed'
    started_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at   TIMESTAMP
);

-- One row per judge call. A parse failure or transport failure is a row, never a gap.
CREATE TABLE verdicts (
    run_id     INTEGER NOT NULL,
    pool_id    INTEGER NOT NULL,
    judge_id   INTEGER NOT NULL,
    format_id  INTEGER NOT NULL,
    prompt_idx INTEGER NOT NULL,
    a_idx      INTEGER NOT NULL,       -- the candidate judged (pointwise) or shown as Response A
    b_idx      INTEGER,                -- comparative: the candidate shown as Response B
    swapped    BOOLEAN NOT NULL DEFAULT false, -- comparative: the reverse orientation of its item
    sample     INTEGER NOT NULL DEFAULT 0,
    raw        VARCHAR,                -- verbatim judge output (null on transport failure)
    label      VARCHAR,                -- canonical label, when parsed
    value      DOUBLE,                 -- parsed value (margin for A on comparative formats)
    status     VARCHAR NOT NULL,       -- 'ok' | 'empty' | 'no_label' | 'ambiguous' | 'out_of_range' | 'failed'
    error      VARCHAR,
    attempts   INTEGER NOT NULL DEFAULT 1,
    latency_ms DOUBLE,
    tokens_in  INTEGER,
    tokens_out INTEGER,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE subsets (
    subset_id  INTEGER NOT NULL,
    pool_id    INTEGER NOT NULL,
    name       VARCHAR NOT NULL,
    judge_id   INTEGER,
    format_id  INTEGER,
    policy     VARCHAR NOT NULL,
    rate       DOUBLE NOT NULL,
    seed       INTEGER,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE subset_members (
    subset_id INTEGER NOT NULL,
    cand_idx  INTEGER NOT NULL
);

CREATE TABLE training_runs (
    train_id     INTEGER NOT NULL,
    subset_id    INTEGER,
    base_model   VARCHAR NOT NULL,
    config       JSON NOT NULL,
    run_dir      VARCHAR NOT NULL,
    adapter_path VARCHAR,
    status       VARCHAR NOT NULL,
    metrics      JSON,
    started_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at  TIMESTAMP
);

CREATE TABLE evaluations (
    eval_id    INTEGER NOT NULL,
    train_id   INTEGER NOT NULL,
    judge_id   INTEGER NOT NULL,
    prompt_idx INTEGER NOT NULL,
    seed       INTEGER NOT NULL,
    answer     VARCHAR,
    outcome    DOUBLE,                 -- 1 wins both orders, 0 loses both, 0.5 otherwise
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
