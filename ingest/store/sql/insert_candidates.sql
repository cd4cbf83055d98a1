-- Stores a pool's candidates, one row per candidate response, from the frame registered as candidates_df.
INSERT INTO candidates (pool_id, cand_idx, prompt_idx, candidate_id, position, response, reference, model, split)
SELECT pool_id, cand_idx, prompt_idx, candidate_id, position, response, reference, model, split FROM candidates_df
