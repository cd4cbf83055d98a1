-- Version 25: a prompt's category. A pool file may name the category of each prompt (MT-Bench's
-- writing, math, coding ...; UltraFeedback's source data set), so that an estimate can be stratified by
-- it (docs/metrics.md#stratified-estimates-estimate---strata). It is the prompt's, the same on each of
-- its candidates, and optional: prompts stored before this version, or from a file without one, have
-- none (NULL).
ALTER TABLE prompts ADD COLUMN category VARCHAR;
