-- The audit's one verdict source scoped to some judges (scope_judges.sql): their calls alone, stored or
-- attached, so that a derived result's part is computed for those judges' cells only.
CREATE OR REPLACE TEMP VIEW verdict_source AS
SELECT * FROM verdict_source_all WHERE judge_id IN (SELECT judge_id FROM scope_judges)
