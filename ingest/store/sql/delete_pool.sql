-- Deletes everything stored about a pool (`import-pool --replace` starts it anew): the children of its
-- subsets and studies first, then every table with a pool_id column, the pool itself last. A table that
-- gains a pool_id column belongs here too (tests/ingest/test_store_sql.py fails while one is missing).
-- The attached cell runs go first, through delete_attached.sql, which keeps their ids' mark.
DELETE FROM subset_members WHERE subset_id IN (SELECT subset_id FROM subsets WHERE pool_id = $pool_id);
DELETE FROM generations WHERE study_id IN (SELECT study_id FROM studies WHERE pool_id = $pool_id);
DELETE FROM evaluations WHERE study_id IN (SELECT study_id FROM studies WHERE pool_id = $pool_id);
DELETE FROM attached_ids WHERE pool_id = $pool_id;
DELETE FROM batch_calls WHERE pool_id = $pool_id;
DELETE FROM batch_exports WHERE pool_id = $pool_id;
DELETE FROM calibrations WHERE pool_id = $pool_id;
DELETE FROM candidates WHERE pool_id = $pool_id;
DELETE FROM cell_runs WHERE pool_id = $pool_id;
DELETE FROM pair_labels WHERE pool_id = $pool_id;
DELETE FROM accept_labels WHERE pool_id = $pool_id;
DELETE FROM label_orders WHERE pool_id = $pool_id;
DELETE FROM label_queues WHERE pool_id = $pool_id;
DELETE FROM label_queue_items WHERE pool_id = $pool_id;
DELETE FROM prompts WHERE pool_id = $pool_id;
DELETE FROM studies WHERE pool_id = $pool_id;
DELETE FROM subsets WHERE pool_id = $pool_id;
DELETE FROM verdicts WHERE pool_id = $pool_id;
DELETE FROM juries WHERE pool_id = $pool_id;
DELETE FROM jury_members WHERE pool_id = $pool_id;
DELETE FROM derived_results WHERE pool_id = $pool_id;
DELETE FROM pools WHERE pool_id = $pool_id;
