-- One row per prompt of a pool: its id in the pool file and its index.
SELECT prompt_id, prompt_idx FROM prompts WHERE pool_id = $pool_id
