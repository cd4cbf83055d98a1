-- One row per row of the attached Parquet files named by getvariable('attached_files'), read where they lie:
-- its pool, file and 1-based row, judge and format from the file's hive folders (the lists attached_pools,
-- attached_judges, attached_formats, set with the files) or its own columns, the verdict file's fields as text
-- (candidate_a / candidate_b of an export-verdicts file stand for candidate_id or a_id / b_id). The empty typed
-- row below gives every optional column, even when no file has it.
CREATE OR REPLACE TEMP VIEW attached_raw AS
SELECT f.pool_id, r.filename AS path, r.file_row_number + 1 AS row_number,
       coalesce(f.judge, r.judge::VARCHAR) AS judge, coalesce(f.format, r.format::VARCHAR) AS format,
       r.prompt_id::VARCHAR AS prompt_id,
       coalesce(r.candidate_id, r.a_id, r.candidate_a)::VARCHAR AS a_id,
       coalesce(r.b_id, r.candidate_b)::VARCHAR AS b_id,
       r.raw::VARCHAR AS raw, r.error::VARCHAR AS error, r.sample AS sample, r.decoding::VARCHAR AS decoding,
       r.tokens_in, r.tokens_out, r.latency_ms, r.label_probs IS NOT NULL AS has_probs
FROM (SELECT * FROM read_parquet(list_distinct(getvariable('attached_files')), hive_partitioning = false,
                                 union_by_name = true, filename = true, file_row_number = true)
      UNION ALL BY NAME
      SELECT NULL::VARCHAR AS judge, NULL::VARCHAR AS format, NULL::VARCHAR AS prompt_id, NULL::VARCHAR AS raw,
             NULL::VARCHAR AS candidate_id, NULL::VARCHAR AS a_id, NULL::VARCHAR AS b_id,
             NULL::VARCHAR AS candidate_a, NULL::VARCHAR AS candidate_b, NULL::VARCHAR AS error,
             NULL::BIGINT AS sample, NULL::VARCHAR AS decoding, NULL::BIGINT AS tokens_in,
             NULL::BIGINT AS tokens_out, NULL::DOUBLE AS latency_ms, NULL AS label_probs,
             NULL::VARCHAR AS filename, NULL::BIGINT AS file_row_number
      WHERE false) r
JOIN (SELECT unnest(getvariable('attached_pools')) AS pool_id, unnest(getvariable('attached_files')) AS path,
             unnest(getvariable('attached_judges')) AS judge, unnest(getvariable('attached_formats')) AS format) f
  ON f.path = r.filename
