-- One row per candidate of a pool, in order: its index, prompt, listing position, reference score and
-- response text (what a scoring run plans and renders its calls from).
SELECT cand_idx, prompt_idx, position, reference, response FROM candidates WHERE pool_id = $pool_id ORDER BY cand_idx
