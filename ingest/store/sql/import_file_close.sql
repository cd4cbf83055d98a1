-- Drops the temp views import_file_rows.sql made over an imported verdict file.
DROP VIEW IF EXISTS import_placed;
DROP VIEW IF EXISTS import_rows;
