-- One row per row of export_verdicts.sql (put in place of the marker below by audit/_export.py): the
-- row as one JSON object in `line`, label_probs nested as an object rather than as text.
SELECT to_json(e) AS line
FROM (SELECT * REPLACE (CAST(label_probs AS JSON) AS label_probs) FROM (/* export_verdicts */) AS x) AS e
