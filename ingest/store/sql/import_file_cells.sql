-- Each distinct judging (judge, format), endpoint as the file writes it, of the file of import_file_rows.sql.
SELECT DISTINCT judge, format, endpoint FROM import_rows
