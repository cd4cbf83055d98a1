-- Per (judge, format) cell of the file of import_file_rows.sql, its rows whose call the pool does not hold
-- yet (import_cells, registered: judge, format, judge_id, format_id; only cells that held verdicts before
-- the import are looked up in `verdicts`).
SELECT c.judge, c.format, count(*) AS n_new
FROM import_placed r
JOIN import_cells c ON c.judge = r.judge AND c.format = r.format
WHERE NOT c.held OR NOT EXISTS (
    SELECT 1 FROM verdicts v
    WHERE v.pool_id = getvariable('import_pool') AND v.judge_id = c.judge_id AND v.format_id = c.format_id
      AND v.decoding = coalesce(r.decoding, 'greedy') AND v.prompt_idx = r.prompt_idx AND v.a_idx = r.a_idx
      AND v.b_idx IS NOT DISTINCT FROM r.b_idx AND v.sample = coalesce(r.sample, 0))
GROUP BY c.judge, c.format
