-- Records one (judge, format) cell of a pool's attached files: its judge, format, kind and cell run.
INSERT INTO attached_cells (pool_id, judge, format, judge_id, format_id, kind, cell_run_id)
VALUES ($pool_id, $judge, $format, $judge_id, $format_id, $kind, $cell_run_id)
