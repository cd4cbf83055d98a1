-- One row: how many generated answers a study holds.
SELECT count(*) FROM generations WHERE study_id = $study_id
