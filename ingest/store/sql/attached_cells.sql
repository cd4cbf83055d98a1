-- Makes the temp view attached_cells on this connection: one row per (judge, format) cell whose verdicts a pool's
-- attached files hold, from the cell runs an attach recorded (cell_runs.attached): its pool, judge and format
-- (names and ids), the format's kind and the cell run.
CREATE OR REPLACE TEMP VIEW attached_cells AS
SELECT r.pool_id, j.name AS judge, f.name AS format, r.judge_id, r.format_id, f.kind, r.cell_run_id
FROM cell_runs r
JOIN judges j ON j.judge_id = r.judge_id
JOIN formats f ON f.format_id = r.format_id
WHERE r.attached IS NOT NULL
