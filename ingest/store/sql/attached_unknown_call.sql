-- The first row of the pool's attached files naming a prompt or candidate the pool lacks (or no candidate where
-- its format's kind needs one): file, row, the field at fault, its value, the prompt and the format's kind.
SELECT r.path, r.row_number,
       CASE WHEN p.prompt_idx IS NULL THEN 'prompt_id'
            WHEN ca.cand_idx IS NULL THEN CASE WHEN c.kind = 'pointwise' THEN 'candidate_id' ELSE 'a_id' END
            ELSE 'b_id' END AS field,
       CASE WHEN p.prompt_idx IS NULL THEN r.prompt_id WHEN ca.cand_idx IS NULL THEN r.a_id ELSE r.b_id END AS value,
       r.prompt_id, r.format, c.kind
FROM attached_raw r
JOIN attached_judgings c ON c.pool_id = r.pool_id AND c.judge = r.judge AND c.format = r.format
LEFT JOIN prompts p ON p.pool_id = r.pool_id AND p.prompt_id = r.prompt_id
LEFT JOIN candidates ca ON ca.pool_id = r.pool_id AND ca.prompt_idx = p.prompt_idx AND ca.candidate_id = r.a_id
LEFT JOIN candidates cb ON cb.pool_id = r.pool_id AND cb.prompt_idx = p.prompt_idx AND cb.candidate_id = r.b_id
WHERE r.pool_id = $pool_id
  AND (p.prompt_idx IS NULL OR ca.cand_idx IS NULL OR (c.kind = 'comparative' AND cb.cand_idx IS NULL))
ORDER BY r.path, r.row_number
LIMIT 1
