-- Drops cell runs that hold no verdict ($cell_run_ids: an import's runs of cells whose calls were all stored
-- already, started before the import knew; the batch path starts none for them).
DELETE FROM cell_runs WHERE list_contains($cell_run_ids, cell_run_id)
