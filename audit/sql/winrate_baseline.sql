-- One row, the winrate estimate's default baseline (audit._worth.default_baseline): the system
-- (candidate_id) of the pool in the most human-labelled pairs (a pair of two of its candidates once),
-- or, where the pool has no such label, with the most candidates; ties by name; `n` that count.
WITH pairs AS (
    SELECT DISTINCT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx
    FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx
), ends AS (             -- each pair once per end (two equality joins: no join on a disjunction)
    SELECT lo_idx, hi_idx, lo_idx AS cand_idx FROM pairs
    UNION ALL
    SELECT lo_idx, hi_idx, hi_idx AS cand_idx FROM pairs
), labelled AS (
    SELECT c.candidate_id, count(DISTINCT (e.lo_idx, e.hi_idx)) AS n
    FROM ends e JOIN candidates c ON c.pool_id = $pool_id AND c.cand_idx = e.cand_idx
    GROUP BY c.candidate_id
), answered AS (
    SELECT candidate_id, count(*) AS n FROM candidates WHERE pool_id = $pool_id GROUP BY candidate_id
)
SELECT candidate_id, n::BIGINT AS n FROM labelled
UNION ALL
SELECT candidate_id, n::BIGINT AS n FROM answered WHERE NOT EXISTS (SELECT 1 FROM labelled)
ORDER BY n DESC, candidate_id
LIMIT 1
