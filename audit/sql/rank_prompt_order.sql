-- One row per prompt of the pool: its prompt_idx and its place in prompt_id order (0-based), by which
-- the rankings number the prompts' kinds (audit._rank_kinds.prompt_kinds).
SELECT prompt_idx, (row_number() OVER (ORDER BY prompt_id) - 1)::INTEGER AS place
FROM prompts WHERE pool_id = $pool_id
