-- Makes the temp views of a Parquet verdict file imported where it lies (import-verdicts from the
-- command line, read by DuckDB rather than in batches). getvariable('import_file') is the file,
-- getvariable('import_pool') the pool; import_formats (registered: format, kind, pairing) the formats a
-- file may name. The empty typed row below gives every optional column, even when the file lacks it.
SET VARIABLE import_file = $path;
SET VARIABLE import_pool = $pool_id;
SET VARIABLE import_pairs = $pairs;
-- import_rows: one row per row of the file, its 0-based row number and the verdict file's fields.
CREATE OR REPLACE TEMP VIEW import_rows AS
SELECT r.file_row_number AS row_idx, r.judge::VARCHAR AS judge, r.format::VARCHAR AS format,
       r.prompt_id::VARCHAR AS prompt_id, r.candidate_id::VARCHAR AS candidate_id, r.a_id::VARCHAR AS a_id,
       r.b_id::VARCHAR AS b_id, r.raw::VARCHAR AS raw, r.error::VARCHAR AS error, r.sample AS sample,
       r.decoding::VARCHAR AS decoding, r.endpoint::VARCHAR AS endpoint, r.tokens_in, r.tokens_out, r.latency_ms,
       r.label_probs IS NOT NULL AS has_probs
FROM (SELECT * FROM read_parquet(getvariable('import_file'), hive_partitioning = false, file_row_number = true)
      UNION ALL BY NAME
      SELECT NULL::VARCHAR AS judge, NULL::VARCHAR AS format, NULL::VARCHAR AS prompt_id, NULL::VARCHAR AS raw,
             NULL::VARCHAR AS candidate_id, NULL::VARCHAR AS a_id, NULL::VARCHAR AS b_id, NULL::VARCHAR AS error,
             NULL::BIGINT AS sample, NULL::VARCHAR AS decoding, NULL::VARCHAR AS endpoint, NULL::BIGINT AS tokens_in,
             NULL::BIGINT AS tokens_out, NULL::DOUBLE AS latency_ms, NULL AS label_probs,
             NULL::BIGINT AS file_row_number
      WHERE false) r;
-- import_placed: each row with its format's kind and pairing, its prompt and its slots in the pool (null where
-- the pool has none), slot A being the candidate of a pointwise call. Slot B is looked up only when the file
-- holds comparative formats (import_pairs).
CREATE OR REPLACE TEMP VIEW import_placed AS
SELECT r.*, f.kind, f.pairing, p.prompt_idx, a.cand_idx AS a_idx, a.position AS a_position,
       b.cand_idx AS b_idx, b.position AS b_position,
       CASE WHEN f.kind = 'pointwise' THEN r.candidate_id ELSE r.a_id END AS a_name
FROM import_rows r
LEFT JOIN import_formats f ON f.format = r.format
LEFT JOIN (SELECT prompt_idx, prompt_id FROM prompts WHERE pool_id = getvariable('import_pool')) p
  ON p.prompt_id = r.prompt_id
LEFT JOIN (SELECT prompt_idx, candidate_id, cand_idx, position FROM candidates
           WHERE pool_id = getvariable('import_pool')) a
  ON a.prompt_idx = p.prompt_idx AND a.candidate_id = CASE WHEN f.kind = 'pointwise' THEN r.candidate_id ELSE r.a_id END
LEFT JOIN (SELECT prompt_idx, candidate_id, cand_idx, position FROM candidates
           WHERE pool_id = getvariable('import_pool') AND getvariable('import_pairs')) b
  ON b.prompt_idx = p.prompt_idx AND b.candidate_id = r.b_id;
