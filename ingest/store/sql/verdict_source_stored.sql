-- The audit's one verdict source when no file is attached: one row per stored judge call (the verdicts table).
CREATE OR REPLACE TEMP VIEW verdict_source AS SELECT * FROM verdicts
