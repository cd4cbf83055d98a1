-- The items an estimate could be about, all of them scored: with $baseline null, one row (system null)
-- whose n_items is the pool's candidates (the accept target); else one row per system s other than
-- $baseline whose n_items is the prompts that s and $baseline both answered (the win rate's items).
WITH cands AS (
    SELECT prompt_idx, candidate_id FROM candidates WHERE pool_id = $pool_id
)
SELECT NULL::VARCHAR AS system, count(*)::BIGINT AS n_items FROM cands WHERE $baseline IS NULL
UNION ALL
SELECT c.candidate_id, count(DISTINCT c.prompt_idx)::BIGINT
FROM cands c JOIN cands b ON b.prompt_idx = c.prompt_idx AND b.candidate_id = $baseline
WHERE $baseline IS NOT NULL AND c.candidate_id <> $baseline
GROUP BY c.candidate_id
ORDER BY system NULLS FIRST
