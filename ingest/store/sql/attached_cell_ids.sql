-- One row per (judge, format) cell of the pool that attached files hold: its judge and format ids and names.
SELECT judge_id, format_id, judge, format FROM attached_cells WHERE pool_id = $pool_id ORDER BY judge, format
