-- The audit's verdict sources scoped to some judgings (scope_judgings.sql): their calls alone, stored or attached,
-- so that a derived result's part is computed for those judgings' cells only; verdict_values with what the audit
-- scores a call by alone.
CREATE OR REPLACE TEMP VIEW verdict_source AS
SELECT v.* FROM verdict_source_all v
SEMI JOIN scope_judgings s ON s.judge_id = v.judge_id AND s.format_id = v.format_id;
CREATE OR REPLACE TEMP VIEW verdict_values AS
SELECT v.* FROM verdict_values_all v
SEMI JOIN scope_judgings s ON s.judge_id = v.judge_id AND s.format_id = v.format_id;
