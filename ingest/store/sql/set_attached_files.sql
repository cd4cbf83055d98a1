-- Names the attached Parquet files this connection reads (attached_raw.sql reads getvariable('attached_files'):
-- each path once, sorted) and, as lists in the same order, each (pool, file) attached: its path, pool and hive
-- judge and format; and whether read_parquet unions their columns by name (files of different column sets)
-- or not (one set: it can then skip the files a join on the path rules out).
SET VARIABLE attached_files = $files;
SET VARIABLE attached_paths = $paths;
SET VARIABLE attached_pools = $pools;
SET VARIABLE attached_judges = $judges;
SET VARIABLE attached_formats = $formats;
SET VARIABLE attached_union = $union;
