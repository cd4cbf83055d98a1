-- One row per stored judge: its name, in order (what an error about an unknown judge lists).
SELECT name FROM judges ORDER BY name
