-- The audit's one verdict source scoped to some judgings (scope_judgings.sql): their calls alone, stored
-- or attached, so that a derived result's part is computed for those judgings' cells only.
CREATE OR REPLACE TEMP VIEW verdict_source AS
SELECT v.* FROM verdict_source_all v
SEMI JOIN scope_judgings s ON s.judge_id = v.judge_id AND s.format_id = v.format_id
