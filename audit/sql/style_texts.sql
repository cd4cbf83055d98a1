-- One row per candidate of the pool that is in slot A or slot B of a parsed comparative call or
-- of a stored human label: its cand_idx and its response text (whose style the fit counts).
-- (One set of the pool's slot indices, not a correlated EXISTS per candidate: 1.8 s -> 0.1 s on
-- ko-arena-hard's 15,000 calls.)
WITH used AS (
    SELECT v.a_idx AS idx FROM verdict_source v JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.value IS NOT NULL
    UNION
    SELECT v.b_idx FROM verdict_source v JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.value IS NOT NULL
    UNION
    SELECT l.a_idx FROM pair_labels l WHERE l.pool_id = $pool_id
    UNION
    SELECT l.b_idx FROM pair_labels l WHERE l.pool_id = $pool_id
)
SELECT c.cand_idx::BIGINT AS cand_idx, c.response
FROM candidates c
WHERE c.pool_id = $pool_id AND c.cand_idx IN (SELECT idx FROM used)
ORDER BY c.cand_idx
