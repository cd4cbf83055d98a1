-- Names the attached Parquet files this connection reads (attached_raw.sql reads getvariable('attached_files')).
SET VARIABLE attached_files = $files
