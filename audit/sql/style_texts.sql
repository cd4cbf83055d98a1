-- One row per candidate of the pool that is in slot A or slot B of a parsed comparative call or
-- of a stored human label: its cand_idx and its response text (whose style the fit counts).
SELECT c.cand_idx::BIGINT AS cand_idx, c.response
FROM candidates c
WHERE c.pool_id = $pool_id
  AND (EXISTS (SELECT 1 FROM verdict_source v JOIN formats f USING (format_id)
               WHERE v.pool_id = c.pool_id AND f.kind = 'comparative' AND v.value IS NOT NULL
                 AND (v.a_idx = c.cand_idx OR v.b_idx = c.cand_idx))
       OR EXISTS (SELECT 1 FROM labels l
                  WHERE l.pool_id = c.pool_id AND (l.a_idx = c.cand_idx OR l.b_idx = c.cand_idx)))
ORDER BY c.cand_idx
