-- Version 22: the machine's load when a scoring run measured its judge's speed. The machine an estimate
-- is made on is often shared: the same 60 calls of the bundled model took 143 s with a load average of
-- 8.6 on 2 cores and 194 s at 11.6, so a time measured under one load and shown under another was off
-- by as much. A run now records the 1-minute load average per core at its process start (before its
-- own work weighs on it), so that an estimate can scale each run's times from its load to the load at
-- the moment the estimate is made (docs/scoring.md#time-estimates). Rows recorded before this version
-- have none (NULL): an estimate that rests on one of them is not scaled.
ALTER TABLE judge_timings ADD COLUMN load_per_core DOUBLE;
