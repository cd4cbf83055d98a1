-- One row: one past the pool's largest cand_idx (0 for a pool without candidates), the end of the
-- batches the pool's style counts are computed in.
SELECT coalesce(max(cand_idx) + 1, 0)::BIGINT AS n FROM candidates WHERE pool_id = $pool_id
