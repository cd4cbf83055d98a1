-- The pool's candidates as an estimate's items need them (audit/_worth_cells.py): cand_idx, prompt_idx,
-- system = the 0-based place of its candidate_id among the pool's systems in candidate_id order (the
-- rows of rank_systems.sql), and stratum: the candidate's stratum by $strata (null: none, and for
-- 'score-bin', which its score gives; 'model', 'split', 'candidate_id': its field, '(none)' where it
-- has no model; 'category': its prompt's, '(none)' where the prompt has none).
WITH systems AS (
    SELECT candidate_id, (row_number() OVER (ORDER BY candidate_id) - 1)::INTEGER AS system
    FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)
)
SELECT c.cand_idx, c.prompt_idx, s.system,
       CASE $strata WHEN 'model' THEN coalesce(c.model, '(none)') WHEN 'split' THEN c.split
                    WHEN 'candidate_id' THEN c.candidate_id
                    WHEN 'category' THEN coalesce(pr.category, '(none)') END AS stratum
FROM candidates c JOIN systems s USING (candidate_id)
LEFT JOIN prompts pr ON $strata = 'category' AND pr.pool_id = $pool_id AND pr.prompt_idx = c.prompt_idx
WHERE c.pool_id = $pool_id
