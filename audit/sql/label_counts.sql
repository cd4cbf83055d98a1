-- One row for the pool: how many human labels it holds of each kind the estimate reads: `pairs`
-- (labels of a pair of two different candidates) and `accepts` (accept/reject labels of a candidate).
SELECT (SELECT count(*) FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx)::BIGINT AS pairs,
       (SELECT count(*) FROM accept_labels WHERE pool_id = $pool_id)::BIGINT AS accepts
