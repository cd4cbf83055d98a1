-- Stores a pool's prompts, one row per prompt (its category null where the file names none), from the
-- frame registered as prompts_df.
INSERT INTO prompts (pool_id, prompt_idx, prompt_id, prompt, category)
SELECT pool_id, prompt_idx, prompt_id, prompt, category FROM prompts_df
