-- Makes two temp views over the attached Parquet files named by getvariable('attached_files'), read where they lie.
-- attached_rows: one row per row of those files as they hold it: its file and 1-based row, the judge and format
-- the file's own columns name (null where its hive folders do), the verdict file's fields as text (candidate_a /
-- candidate_b of an export-verdicts file stand for candidate_id or a_id / b_id). The empty typed row below gives
-- every optional column, even when no file has it. A filter on `path` (a join on it) skips the other files.
CREATE OR REPLACE TEMP VIEW attached_rows AS
SELECT r.filename AS path, r.file_row_number + 1 AS row_number,
       r.judge::VARCHAR AS file_judge, r.format::VARCHAR AS file_format, r.prompt_id::VARCHAR AS prompt_id,
       coalesce(r.candidate_id, r.a_id, r.candidate_a)::VARCHAR AS a_id,
       coalesce(r.b_id, r.candidate_b)::VARCHAR AS b_id,
       r.raw::VARCHAR AS raw, r.error::VARCHAR AS error, r.sample AS sample, r.decoding::VARCHAR AS decoding,
       r.tokens_in, r.tokens_out, r.latency_ms, r.label_probs IS NOT NULL AS has_probs
FROM (SELECT * FROM read_parquet(getvariable('attached_files'), hive_partitioning = false,
                                 union_by_name = getvariable('attached_union'), filename = true,
                                 file_row_number = true)
      UNION ALL BY NAME
      SELECT NULL::VARCHAR AS judge, NULL::VARCHAR AS format, NULL::VARCHAR AS prompt_id, NULL::VARCHAR AS raw,
             NULL::VARCHAR AS candidate_id, NULL::VARCHAR AS a_id, NULL::VARCHAR AS b_id,
             NULL::VARCHAR AS candidate_a, NULL::VARCHAR AS candidate_b, NULL::VARCHAR AS error,
             NULL::BIGINT AS sample, NULL::VARCHAR AS decoding, NULL::BIGINT AS tokens_in,
             NULL::BIGINT AS tokens_out, NULL::DOUBLE AS latency_ms, NULL AS label_probs,
             NULL::VARCHAR AS filename, NULL::BIGINT AS file_row_number
      WHERE false) r;
-- attached_raw: the same rows with their pool and their judge and format, from the file's hive folders (the
-- lists attached_pools, attached_judges, attached_formats, set with the files) or its own columns.
CREATE OR REPLACE TEMP VIEW attached_raw AS
SELECT f.pool_id, r.path, r.row_number, coalesce(f.judge, r.file_judge) AS judge,
       coalesce(f.format, r.file_format) AS format, r.prompt_id, r.a_id, r.b_id, r.raw, r.error, r.sample,
       r.decoding, r.tokens_in, r.tokens_out, r.latency_ms, r.has_probs
FROM attached_rows r
JOIN (SELECT unnest(getvariable('attached_pools')) AS pool_id, unnest(getvariable('attached_paths')) AS path,
             unnest(getvariable('attached_judges')) AS judge, unnest(getvariable('attached_formats')) AS format) f
  ON f.path = r.path;
