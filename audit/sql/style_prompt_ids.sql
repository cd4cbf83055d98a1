-- One row per prompt of the pool, in prompt_id order: the row's position is the prompt's `unit` in
-- style_rank_rows.
SELECT prompt_id FROM prompts WHERE pool_id = $pool_id ORDER BY prompt_id
