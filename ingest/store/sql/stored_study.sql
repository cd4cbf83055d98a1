-- One row: the study stored under a name (its id, pool and held-out rule), if any.
SELECT study_id, pool_id, heldout FROM studies WHERE name = $name
