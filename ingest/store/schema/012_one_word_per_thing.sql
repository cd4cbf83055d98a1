-- Version 12: one word per thing (docs/glossary.md#words-not-used, docs/layout.md#the-database).
-- Until now `run_id` named a background run in `runs` and a cell run in `cell_runs`, `verdicts` and
-- `batch_calls`, and `job_id` pointed from a cell run (and a generation or an evaluation) to the
-- background run. From here on a **run** is a background run (`run_id`) and a **cell run** is one
-- run's work on one cell (`cell_run_id`); a verdict points to its cell run, a cell run to its run
-- (null for a file import done in the foreground). Nothing is called a job.
--
-- `cell_runs.decoding` and `batch_exports.decoding` held the decoding *settings* (a JSON object: mode, temperature, samples,
-- ...), while `decoding` everywhere else is the mode string (greedy | constrained): the columns
-- become `decoding_settings`.
--
-- `formats.pairing` said 'pointwise' for pointwise formats, a second word for what `kind` says:
-- pairing is now the comparative formats' pairing alone ('anchored' | 'tournament'), null for a
-- pointwise format. (The spec JSON and its hash keep the version-1 layout: a stored format keeps
-- its identity.)
--
-- Renames only: no row is rewritten but the pairing's; every earlier database opens as before.
ALTER TABLE verdicts RENAME COLUMN run_id TO cell_run_id;
ALTER TABLE cell_runs RENAME COLUMN run_id TO cell_run_id;
ALTER TABLE cell_runs RENAME COLUMN job_id TO run_id;
ALTER TABLE cell_runs RENAME COLUMN decoding TO decoding_settings;
ALTER TABLE batch_exports RENAME COLUMN decoding TO decoding_settings;
ALTER TABLE batch_calls RENAME COLUMN run_id TO cell_run_id;
-- DuckDB renames no column of a table an index depends on: the two unique indexes of version 7
-- are dropped and made again, unchanged, in the same transaction.
DROP INDEX generations_one;
ALTER TABLE generations RENAME COLUMN job_id TO run_id;
CREATE UNIQUE INDEX generations_one ON generations (study_id, condition, seed, prompt_idx);
DROP INDEX evaluations_one;
ALTER TABLE evaluations RENAME COLUMN job_id TO run_id;
CREATE UNIQUE INDEX evaluations_one ON evaluations (study_id, condition, seed, prompt_idx, judge_id);
ALTER TABLE formats ALTER COLUMN pairing DROP NOT NULL;
UPDATE formats SET pairing = NULL WHERE pairing = 'pointwise';
