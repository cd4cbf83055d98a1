-- One row: how many files and judgings a pool's attached verdict source holds (each attached cell run lists the files).
SELECT (SELECT count(DISTINCT f.path) FROM (SELECT unnest(attached.files) AS f FROM cell_runs
                                            WHERE pool_id = $pool_id AND attached IS NOT NULL)),
       (SELECT count(*) FROM cell_runs WHERE pool_id = $pool_id AND attached IS NOT NULL)
