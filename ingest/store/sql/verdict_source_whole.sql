-- The audit's verdict sources, every judge's calls: one row per judge call, stored or attached; verdict_values
-- with what the audit scores a call by alone (an attached call's file is then never read).
CREATE OR REPLACE TEMP VIEW verdict_source AS SELECT * FROM verdict_source_all;
CREATE OR REPLACE TEMP VIEW verdict_values AS SELECT * FROM verdict_values_all;
