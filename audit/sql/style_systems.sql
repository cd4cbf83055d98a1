-- One row per candidate of the pool: its cand_idx and its system's code (the rank of its candidate_id
-- among the pool's, 0-based, as rank_systems lists them). Unordered: the caller places rows by cand_idx.
SELECT c.cand_idx::INTEGER AS cand_idx, s.code::INTEGER AS code
FROM candidates c
JOIN (SELECT candidate_id, dense_rank() OVER (ORDER BY candidate_id) - 1 AS code
      FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)) s USING (candidate_id)
WHERE c.pool_id = $pool_id
