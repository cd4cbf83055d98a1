-- One row if an evaluation study named $study exists.
SELECT 1 FROM studies WHERE name = $study
