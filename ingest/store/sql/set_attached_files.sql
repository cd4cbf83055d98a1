-- Names the attached Parquet files this connection reads (attached_raw.sql reads getvariable('attached_files'),
-- each path once) and, as lists in the same order, the pool and the hive judge and format of each.
SET VARIABLE attached_files = $files;
SET VARIABLE attached_pools = $pools;
SET VARIABLE attached_judges = $judges;
SET VARIABLE attached_formats = $formats;
