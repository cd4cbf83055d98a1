-- One row or none: the constraint mechanism of a judge's latest constrained cell run of a format in a pool
-- (the server's mechanism `score --constraint` recorded), so `align` asks the cell as it was scored.
SELECT json_extract_string(c.decoding_settings, '$.constraint.mechanism')
FROM cell_runs c JOIN formats f USING (format_id)
WHERE c.pool_id = $pool_id AND c.judge_id = $judge_id AND f.name = $format
  AND json_extract_string(c.decoding_settings, '$.mode') = 'constrained'
  AND json_extract_string(c.decoding_settings, '$.constraint.mechanism') IS NOT NULL
ORDER BY c.cell_run_id DESC
LIMIT 1
