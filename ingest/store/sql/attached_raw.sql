-- Makes two temp views over the attached Parquet files named by getvariable('attached_files'), read where they lie.
-- attached_rows: one row per row of those files as they hold it: its file (path, and file_index: its place in the
-- connection's list), its pool and file_no (the key of attached_ids, looked up by file_index, no join), its row
-- (file_row, 0-based; row_number, 1-based, as messages name it), the judge and format the file's own columns name
-- (null where its hive folders do), the verdict file's fields as text (candidate_a / candidate_b of an
-- export-verdicts file stand for candidate_id or a_id / b_id). The empty typed row below gives every optional
-- column, even when no file has it. A join on file_index skips the other files.
CREATE OR REPLACE TEMP VIEW attached_rows AS
SELECT r.filename AS path, r.file_index, r.file_row_number AS file_row, r.file_row_number + 1 AS row_number,
       getvariable('attached_pools')[r.file_index::BIGINT + 1] AS pool_id,
       getvariable('attached_file_nos')[r.file_index::BIGINT + 1] AS file_no,
       r.judge::VARCHAR AS file_judge, r.format::VARCHAR AS file_format, r.prompt_id::VARCHAR AS prompt_id,
       coalesce(r.candidate_id, r.a_id, r.candidate_a)::VARCHAR AS a_id,
       coalesce(r.b_id, r.candidate_b)::VARCHAR AS b_id,
       r.raw::VARCHAR AS raw, r.error::VARCHAR AS error, r.sample AS sample, r.decoding::VARCHAR AS decoding,
       r.tokens_in, r.tokens_out, r.latency_ms, r.label_probs IS NOT NULL AS has_probs
FROM (SELECT *, file_index FROM read_parquet(getvariable('attached_files'), hive_partitioning = false,
                                             union_by_name = getvariable('attached_union'), filename = true,
                                             file_row_number = true)
      UNION ALL BY NAME
      SELECT NULL::VARCHAR AS judge, NULL::VARCHAR AS format, NULL::VARCHAR AS prompt_id, NULL::VARCHAR AS raw,
             NULL::VARCHAR AS candidate_id, NULL::VARCHAR AS a_id, NULL::VARCHAR AS b_id,
             NULL::VARCHAR AS candidate_a, NULL::VARCHAR AS candidate_b, NULL::VARCHAR AS error,
             NULL::BIGINT AS sample, NULL::VARCHAR AS decoding, NULL::BIGINT AS tokens_in,
             NULL::BIGINT AS tokens_out, NULL::DOUBLE AS latency_ms, NULL AS label_probs,
             NULL::VARCHAR AS filename, NULL::BIGINT AS file_row_number, NULL::UBIGINT AS file_index
      WHERE false) r;
-- attached_raw: the same rows with their judge and format, from the file's hive folders (the lists
-- attached_judges, attached_formats, set with the files) or its own columns.
CREATE OR REPLACE TEMP VIEW attached_raw AS
SELECT r.pool_id, r.path, r.row_number, coalesce(getvariable('attached_judges')[r.file_index::BIGINT + 1], r.file_judge) AS judge,
       coalesce(getvariable('attached_formats')[r.file_index::BIGINT + 1], r.file_format) AS format, r.prompt_id,
       r.a_id, r.b_id, r.raw, r.error, r.sample, r.decoding, r.tokens_in, r.tokens_out, r.latency_ms, r.has_probs
FROM attached_rows r;
