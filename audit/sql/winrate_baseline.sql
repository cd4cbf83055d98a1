-- One row, the winrate estimate's default baseline (audit._worth.default_baseline): the system
-- (candidate_id) of the pool in the most human-labelled pairs (a pair of two of its candidates once),
-- or, where the pool has no such label, with the most candidates; ties by name; `n` that count.
WITH pairs AS (
    SELECT DISTINCT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx
    FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx
), labelled AS (
    SELECT c.candidate_id, count(DISTINCT (p.lo_idx, p.hi_idx)) AS n
    FROM pairs p JOIN candidates c ON c.pool_id = $pool_id AND c.cand_idx IN (p.lo_idx, p.hi_idx)
    GROUP BY c.candidate_id
), answered AS (
    SELECT candidate_id, count(*) AS n FROM candidates WHERE pool_id = $pool_id GROUP BY candidate_id
)
SELECT candidate_id, n::BIGINT AS n FROM labelled
UNION ALL
SELECT candidate_id, n::BIGINT AS n FROM answered WHERE NOT EXISTS (SELECT 1 FROM labelled)
ORDER BY n DESC, candidate_id
LIMIT 1
