-- Deletes a jury of a pool: its verdicts (its members' votes combined), its cell runs, its members
-- and its row (a refresh writes them anew; `jury` with a known name replaces it).
DELETE FROM verdicts WHERE pool_id = $pool_id AND judge_id = $judge_id;
DELETE FROM cell_runs WHERE pool_id = $pool_id AND judge_id = $judge_id;
DELETE FROM jury_members WHERE pool_id = $pool_id AND judge_id = $judge_id;
DELETE FROM juries WHERE pool_id = $pool_id AND judge_id = $judge_id;
