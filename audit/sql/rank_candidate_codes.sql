-- One row per candidate of the pool: its cand_idx and its system's code, the rank of its candidate_id
-- among the pool's distinct candidate_ids (0-based: its row in rank_systems).
WITH systems AS (
    SELECT candidate_id, (dense_rank() OVER (ORDER BY candidate_id) - 1)::INTEGER AS code
    FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)
)
SELECT c.cand_idx, s.code FROM candidates c JOIN systems s USING (candidate_id) WHERE c.pool_id = $pool_id
