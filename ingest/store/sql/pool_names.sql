-- One row per stored pool: its name.
SELECT name FROM pools ORDER BY name
