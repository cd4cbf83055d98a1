-- One row per prompt of a pool: its index and text, in order.
SELECT prompt_idx, prompt FROM prompts WHERE pool_id = $pool_id ORDER BY prompt_idx
