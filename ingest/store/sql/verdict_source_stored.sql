-- Every judge call when no file is attached: one row per stored call (the verdicts table); verdict_source reads it.
CREATE OR REPLACE TEMP VIEW verdict_source_all AS SELECT * FROM verdicts
