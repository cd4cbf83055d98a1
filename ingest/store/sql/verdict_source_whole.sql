-- The audit's verdict sources, every judge's calls: one row per judge call, stored or attached; verdict_calls
-- without the calls' prompt and candidates (an attached call's ids are then never joined).
CREATE OR REPLACE TEMP VIEW verdict_source AS SELECT * FROM verdict_source_all;
CREATE OR REPLACE TEMP VIEW verdict_calls AS SELECT * FROM verdict_calls_all;
