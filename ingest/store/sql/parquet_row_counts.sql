-- One row per Parquet file of $files: its path and the row count its footer gives.
SELECT file_name, num_rows FROM parquet_file_metadata($files)
