-- Version 3: every judge call is stored once, enforced by the database (DESIGN.md "Judge identity").
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

ALTER TABLE verdicts ADD COLUMN decoding VARCHAR DEFAULT 'greedy';
UPDATE verdicts SET decoding = 'constrained'
WHERE b_idx IS NULL AND judge_id IN (SELECT judge_id FROM judges WHERE provider = 'local');
UPDATE verdicts SET decoding = 'greedy' WHERE decoding IS NULL;
ALTER TABLE verdicts ALTER COLUMN decoding SET NOT NULL;

DELETE FROM verdicts WHERE rowid IN (
    SELECT rid FROM (
        SELECT rowid AS rid,
               row_number() OVER (
                   PARTITION BY pool_id, judge_id, format_id, decoding, prompt_idx, a_idx,
                                coalesce(b_idx, -1), sample
                   ORDER BY (status = 'ok') DESC, (status <> 'failed') DESC, created_at DESC,
                            run_id DESC) AS keep_rank
        FROM verdicts)
    WHERE keep_rank > 1);

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
