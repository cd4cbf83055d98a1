-- Each distinct (format, raw) answer of the file of import_file_rows.sql, to be parsed once.
SELECT DISTINCT format, raw FROM import_rows
