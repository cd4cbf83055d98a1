-- Version 4: background runs (score, train, evaluate, probe), one row each, written only through
-- ingest/runs.py, which launches, watches and cancels them. A run is its own process (its own
-- session); the app and the CLI read the same rows and no page holds a process handle.
CREATE TABLE runs (
    run_id       INTEGER NOT NULL,
    kind         VARCHAR NOT NULL,     -- 'score' | 'train' | 'evaluate' | 'probe'
    status       VARCHAR NOT NULL,     -- 'queued' | 'running' | 'finished' | 'failed' | 'cancelled'
    pool         VARCHAR,              -- the pool it works on, by name
    run_key      VARCHAR,              -- runs with the same key are exclusive (e.g. one pool + judge)
    queue        VARCHAR,              -- runs of a queue take turns (e.g. 'train': one at a time)
    pid          INTEGER,
    pid_start    BIGINT,               -- the process's start time (Linux clock ticks): pid reuse check
    host         VARCHAR,
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    started_at   TIMESTAMP,
    finished_at  TIMESTAMP,
    heartbeat_at TIMESTAMP,
    cancel_requested_at TIMESTAMP,
    config       JSON,                 -- frozen at launch: the command and its settings
    out_dir      VARCHAR,
    log_path     VARCHAR,
    progress     JSON,                 -- the latest progress record
    error        VARCHAR
);
INSERT INTO id_marks VALUES ('runs', 0);
