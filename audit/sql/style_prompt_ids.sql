-- One row per prompt of the pool, in prompt_id order: its prompt_idx and prompt_id; the row's position
-- is the prompt's `unit` in the style fit's rows (audit._style_cells.style_groups).
SELECT prompt_idx::INTEGER AS prompt_idx, prompt_id FROM prompts WHERE pool_id = $pool_id ORDER BY prompt_id
