-- Version 7: downstream evaluation (docs/training.md#evaluating-the-students,
-- docs/metrics.md#downstream-contrasts). The `evaluations` table of version 1 was never written; it is
-- replaced by three tables: a study (conditions answering a pool's held-out prompts), the answers each
-- condition generated, and one judged outcome per (study, condition, seed, prompt, evaluation judge).
DROP TABLE evaluations;

-- One row per study: `judgeaudit evaluate --study NAME` (default: the pool's name) adds to it.
CREATE TABLE studies (
    study_id   INTEGER NOT NULL,
    name       VARCHAR NOT NULL,
    pool_id    INTEGER NOT NULL,
    heldout    JSON NOT NULL,          -- the held-out rule: {"rule": "split" | "share", "share", "seed"}
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE UNIQUE INDEX studies_name ON studies (name);

-- One row per answer: a condition (the base model, 'base', or a training condition) with a seed
-- (the training seed; the base model 0) answering one held-out prompt, greedy.
CREATE TABLE generations (
    study_id   INTEGER NOT NULL,
    condition  VARCHAR NOT NULL,
    seed       INTEGER NOT NULL,
    train_run  VARCHAR,                -- the training run (id or folder); null for the base model
    base_model VARCHAR NOT NULL,
    prompt_idx INTEGER NOT NULL,
    answer     VARCHAR NOT NULL,
    answer_len INTEGER NOT NULL,       -- characters of the answer
    ref_idx    INTEGER NOT NULL,       -- cand_idx of the prompt's reference-top answer
    ref_len    INTEGER NOT NULL,       -- characters of that answer
    markdown   BOOLEAN NOT NULL,       -- the answer uses markdown (headings, lists, emphasis, code, tables)
    tokens_out INTEGER,
    truncated  BOOLEAN,                -- stopped at --max-new-tokens
    job_id     INTEGER,                -- the background run (runs table) that made it
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE UNIQUE INDEX generations_one ON generations (study_id, condition, seed, prompt_idx);

-- One row per (study, condition, seed, prompt, evaluation judge): the answer against the
-- reference-top answer in both orders with the `tournament` format; margins favour Response A.
CREATE TABLE evaluations (
    study_id   INTEGER NOT NULL,
    condition  VARCHAR NOT NULL,
    seed       INTEGER NOT NULL,
    prompt_idx INTEGER NOT NULL,
    judge_id   INTEGER NOT NULL,
    raw_ab     VARCHAR,                -- the student's answer as Response A
    value_ab   DOUBLE,
    status_ab  VARCHAR NOT NULL,       -- a parse status, or 'failed' (error_ab says why)
    error_ab   VARCHAR,
    raw_ba     VARCHAR,                -- the student's answer as Response B
    value_ba   DOUBLE,
    status_ba  VARCHAR NOT NULL,
    error_ba   VARCHAR,
    outcome    DOUBLE,                 -- 1 wins both orders, 0 loses both, 0.5 otherwise; null unless both parsed
    job_id     INTEGER,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE UNIQUE INDEX evaluations_one ON evaluations (study_id, condition, seed, prompt_idx, judge_id);
INSERT INTO id_marks VALUES ('studies', 0);
