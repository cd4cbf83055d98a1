-- One row per kind of human label the pool holds (`pair`: labels of a pair of two different candidates;
-- `accept`: accept/reject labels of a candidate): how many annotators gave them, how many items they
-- label, and how many of those items at least two annotators labelled (the alternative annotator
-- test's items before a cell's verdicts are asked for).
WITH pair AS (
    SELECT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx, annotator
    FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx
), accept AS (
    SELECT cand_idx, annotator FROM accept_labels WHERE pool_id = $pool_id
), pair_items AS (
    SELECT count(DISTINCT annotator) AS n FROM pair GROUP BY lo_idx, hi_idx
), accept_items AS (
    SELECT count(DISTINCT annotator) AS n FROM accept GROUP BY cand_idx
)
SELECT 'pair' AS kind, (SELECT count(DISTINCT annotator) FROM pair)::BIGINT AS annotators,
       (SELECT count(*) FROM pair_items)::BIGINT AS items,
       (SELECT count(*) FROM pair_items WHERE n >= 2)::BIGINT AS shared
UNION ALL
SELECT 'accept', (SELECT count(DISTINCT annotator) FROM accept)::BIGINT,
       (SELECT count(*) FROM accept_items)::BIGINT,
       (SELECT count(*) FROM accept_items WHERE n >= 2)::BIGINT
