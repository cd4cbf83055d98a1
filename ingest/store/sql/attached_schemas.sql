-- One row: how many different column sets (names and types) the Parquet files $files hold; read_parquet skips the
-- files a join on the path rules out only when it need not union them by name (one column set).
SELECT count(DISTINCT columns)
FROM (SELECT file_name, list(concat_ws(':', name, type, logical_type, num_children) ORDER BY name, type) AS columns
      FROM parquet_schema($files) GROUP BY file_name)
