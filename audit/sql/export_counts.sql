-- One row per (sample, status) of export_verdicts.sql's rows (put in place of the marker below by
-- audit/_export.py): how many rows the verdict export holds of each, for the Report page's count.
SELECT sample, status, count(*) AS n
FROM (/* export_verdicts */) AS e
GROUP BY sample, status
ORDER BY sample, status
