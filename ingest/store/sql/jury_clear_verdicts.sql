-- Deletes a jury's verdicts (its members' votes combined) and cell runs in a pool, before a refresh writes them anew.
DELETE FROM verdicts WHERE pool_id = $pool_id AND judge_id = $judge_id;
DELETE FROM cell_runs WHERE pool_id = $pool_id AND judge_id = $judge_id;
