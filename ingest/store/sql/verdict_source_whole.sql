-- The audit's one verdict source, every judge's calls: one row per judge call, stored or attached.
CREATE OR REPLACE TEMP VIEW verdict_source AS SELECT * FROM verdict_source_all
