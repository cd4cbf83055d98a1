-- One row when the database has the juries table (schema 15 on; a read-only reader never migrates).
SELECT 1 FROM information_schema.tables WHERE table_name = 'juries'
