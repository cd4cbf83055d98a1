-- One row per stored human label of the pool on a pair of two different systems: the prompt, the
-- pair in the label's orientation (a_idx, b_idx and their candidate_ids, the systems) and the label
-- ('A' = a_idx is better, 'B' = b_idx, 'tie'); one row per annotator.
SELECT p.prompt_id, l.a_idx::BIGINT AS a_idx, l.b_idx::BIGINT AS b_idx,
       ca.candidate_id AS a_id, cb.candidate_id AS b_id, l.label
FROM pair_labels l
JOIN prompts p ON p.pool_id = l.pool_id AND p.prompt_idx = l.prompt_idx
JOIN candidates ca ON ca.pool_id = l.pool_id AND ca.cand_idx = l.a_idx
JOIN candidates cb ON cb.pool_id = l.pool_id AND cb.cand_idx = l.b_idx
WHERE l.pool_id = $pool_id AND ca.candidate_id <> cb.candidate_id
ORDER BY l.source_file, l.line
