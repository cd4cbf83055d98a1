-- Names the attached Parquet files this connection reads (attached_raw.sql reads getvariable('attached_files'))
-- and, as lists in the same order, each one's pool, its place among the pool's files sorted by path (file_no, the
-- key of attached_ids with the pool), and its hive judge and format: one entry per (pool, file), so read_parquet's
-- file_index is a position in these lists; and whether read_parquet unions their columns by name (files of
-- different column sets) or not (one set: it can then skip the files a join on file_index rules out). Each pool's
-- files are listed together, in path order: attached_pool_firsts maps a pool to its first file's file_index, so
-- file_index = that + file_no.
SET VARIABLE attached_files = $files;
SET VARIABLE attached_pools = $pools;
SET VARIABLE attached_file_nos = $file_nos;
SET VARIABLE attached_judges = $judges;
SET VARIABLE attached_formats = $formats;
SET VARIABLE attached_union = $union;
SET VARIABLE attached_pool_firsts = (SELECT map(list(pool_id ORDER BY pool_id), list(first ORDER BY pool_id))
                                     FROM (SELECT pool_id, min(i) - 1 AS first
                                           FROM (SELECT unnest($pools::INTEGER[]) AS pool_id,
                                                        generate_subscripts($pools::INTEGER[], 1) AS i)
                                           GROUP BY pool_id));
