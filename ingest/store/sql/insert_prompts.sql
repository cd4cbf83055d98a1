-- Stores a pool's prompts, one row per prompt, from the frame registered as prompts_df.
INSERT INTO prompts (pool_id, prompt_idx, prompt_id, prompt)
SELECT pool_id, prompt_idx, prompt_id, prompt FROM prompts_df
