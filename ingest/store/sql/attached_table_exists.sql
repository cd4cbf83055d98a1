-- One row: whether the database knows attached files (migration 016; a read-only connection never migrates).
SELECT count(*) > 0 FROM information_schema.tables WHERE table_name = 'attached_files'
