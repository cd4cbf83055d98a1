-- One row when the database has the juries table (schema 15 on; the audit never migrates a database).
SELECT 1 AS found FROM information_schema.tables WHERE table_name = 'juries'
