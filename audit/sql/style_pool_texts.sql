-- One row per candidate of the pool with $lo <= cand_idx < $hi (a batch: the pool's style counts are
-- computed once for every candidate, a batch of texts at a time): its cand_idx and its response text.
SELECT cand_idx::BIGINT AS cand_idx, response
FROM candidates
WHERE pool_id = $pool_id AND cand_idx >= $lo AND cand_idx < $hi
ORDER BY cand_idx
