-- One row per candidate of a pool: its prompt, its id in the pool file, its index, its listing position
-- and its reference score (no texts: an import places rows with these alone).
SELECT prompt_idx, candidate_id, cand_idx, position, reference FROM candidates WHERE pool_id = $pool_id
