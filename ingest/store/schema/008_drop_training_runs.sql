-- Version 8: `training_runs` (version 1) was never read or written: a training run is a background
-- run (the `runs` table, kind 'train', version 4) whose folder holds its config, progress, log,
-- metrics and adapter. The table goes, so that the schema says what the store really holds.
DROP TABLE IF EXISTS training_runs;
