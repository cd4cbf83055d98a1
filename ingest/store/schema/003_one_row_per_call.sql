-- Version 3: every judge call is stored once, enforced by the database
-- (docs/scoring.md#one-row-per-call-one-judge-per-name).
--
-- * The per (judge, format) provenance records move to `cell_runs`; `runs` becomes the table of
--   background runs (004). `job_id` links a cell run to the background run that made it.
-- * `verdicts.decoding` says how the verdict was read: 'greedy' (the paper's protocol: generate,
--   then parse) or 'constrained' (restricted to the format's labels). The bundled model's pointwise
--   verdicts were always the label-constrained reading.
-- * Duplicates already stored are removed: per call, the latest parsed answer is kept, otherwise the
--   latest answer, otherwise the latest failed attempt. Then a unique index holds the rule.
-- * `judges.identity` binds a judge name to provider, model, endpoint and decoding settings.
-- * `id_marks` remembers the highest id ever handed out per table, so ids are never reused (a
--   leftover journal of a replaced pool can never land on its successor).

ALTER TABLE runs RENAME TO cell_runs;
ALTER TABLE cell_runs ADD COLUMN job_id INTEGER;

-- The verdicts table is rebuilt (DuckDB cannot index rows deleted in the same transaction).
CREATE TABLE verdicts_v3 (
    run_id      INTEGER NOT NULL,
    pool_id     INTEGER NOT NULL,
    judge_id    INTEGER NOT NULL,
    format_id   INTEGER NOT NULL,
    decoding    VARCHAR NOT NULL DEFAULT 'greedy',   -- 'greedy' | 'constrained'
    prompt_idx  INTEGER NOT NULL,
    a_idx       INTEGER NOT NULL,
    b_idx       INTEGER,
    swapped     BOOLEAN NOT NULL DEFAULT false,
    sample      INTEGER NOT NULL DEFAULT 0,
    raw         VARCHAR,
    label       VARCHAR,
    value       DOUBLE,
    status      VARCHAR NOT NULL,
    error       VARCHAR,
    attempts    INTEGER NOT NULL DEFAULT 1,
    latency_ms  DOUBLE,
    tokens_in   INTEGER,
    tokens_out  INTEGER,
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    label_probs JSON,
    expected    DOUBLE
);

INSERT INTO verdicts_v3 (run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, swapped,
                         sample, raw, label, value, status, error, attempts, latency_ms, tokens_in,
                         tokens_out, created_at, label_probs, expected)
SELECT run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, swapped, sample, raw,
       label, value, status, error, attempts, latency_ms, tokens_in, tokens_out, created_at,
       label_probs, expected
FROM (
    SELECT *, CASE WHEN b_idx IS NULL AND judge_id IN (SELECT judge_id FROM judges WHERE provider = 'local')
                   THEN 'constrained' ELSE 'greedy' END AS decoding
    FROM verdicts)
QUALIFY row_number() OVER (
    PARTITION BY pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, coalesce(b_idx, -1), sample
    ORDER BY (status = 'ok') DESC, (status <> 'failed') DESC, created_at DESC, run_id DESC) = 1;

DROP TABLE verdicts;
ALTER TABLE verdicts_v3 RENAME TO verdicts;

CREATE UNIQUE INDEX verdicts_one_per_call ON verdicts
    (pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, coalesce(b_idx, -1), sample);

ALTER TABLE judges ADD COLUMN identity JSON;

CREATE TABLE id_marks (
    name    VARCHAR NOT NULL,      -- table name
    last_id INTEGER NOT NULL       -- the highest id handed out so far
);
INSERT INTO id_marks SELECT 'pools', coalesce(max(pool_id), 0) FROM pools;
INSERT INTO id_marks SELECT 'cell_runs', coalesce(max(run_id), 0) FROM cell_runs;
INSERT INTO id_marks SELECT 'judges', coalesce(max(judge_id), 0) FROM judges;
INSERT INTO id_marks SELECT 'formats', coalesce(max(format_id), 0) FROM formats;
INSERT INTO id_marks SELECT 'subsets', coalesce(max(subset_id), 0) FROM subsets;
