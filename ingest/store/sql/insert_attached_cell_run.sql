-- Records one judging (judge, format) of a pool's attached files as a cell run of source 'attach' (running until
-- finished): its id is the next one never handed out (delete_attached.sql keeps the mark when it goes), and it
-- carries the pool's attached files (attached_files_df) and the judging's distinct answers parsed (parsed_raws).
INSERT INTO cell_runs (cell_run_id, pool_id, judge_id, format_id, source, source_file, status, attached)
SELECT greatest((SELECT coalesce(max(cell_run_id), 0) FROM cell_runs),
                (SELECT coalesce(max(last_id), 0) FROM id_marks WHERE name = 'cell_runs')) + 1,
       $pool_id, $judge_id, $format_id, 'attach', $source_file, 'running',
       {'files': (SELECT list({'path': path, 'size': size, 'mtime_ns': mtime_ns, 'n_rows': n_rows, 'judge': judge,
                               'format': format} ORDER BY path) FROM attached_files_df),
        'parses': coalesce((SELECT list({'raw': raw, 'answer': answer, 'value': value, 'status': status} ORDER BY raw)
                            FROM parsed_raws WHERE judge = $judge AND format = $format), [])}
RETURNING cell_run_id
