-- The judges a reading is scoped to (their ids; none when the reading sees every judge): a derived
-- result's per-judge part is computed from these judges' calls alone.
CREATE OR REPLACE TEMP TABLE scope_judges AS SELECT judge_id FROM judges WHERE list_contains($judges, name)
