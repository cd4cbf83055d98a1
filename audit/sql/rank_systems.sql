-- One row per system (distinct candidate_id) of the pool, in candidate_id order: the row's position
-- is the system's code (rank_candidate_codes).
SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id ORDER BY candidate_id
