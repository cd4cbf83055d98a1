-- Version 22: the machine's load when a scoring run measured its judge's speed. The machine an estimate
-- is made on is often shared: the same 60 calls of the bundled model took 124 s at a load average of
-- 5.8 a core and 176 s at 6.5, so an estimate says what load its runs met beside the load now
-- (docs/scoring.md#time-estimates). A run records the 1-minute load average per core at its start,
-- as it begins loading its judge (before its own work weighs on it). Rows recorded before this version
-- have none (NULL): an estimate that rests on one of them says no load.
ALTER TABLE judge_timings ADD COLUMN load_per_core DOUBLE;
