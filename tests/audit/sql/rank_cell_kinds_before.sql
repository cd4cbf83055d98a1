-- The reference of tests/audit/test_rank_cells.py (rank_before): how audit/sql/rank_cell_kinds.sql grouped
-- the kinds before audit._rank_kinds.prompt_kinds grouped them in numpy (issue 39: about a tenth of its CPU).
-- The prompts' kinds of one comparative cell, per order ('both': every parsed call between two
-- different candidates; 'single': those in the forward orientation, an unknown one counting as not
-- forward). A prompt's vector is, per pair of systems (lo < hi: their ranks among the pool's
-- candidate_ids, 0-based), lo's summed credit (a margin > 0 one win for slot A, < 0 none, 0 half)
-- and the number of calls; prompts with the same vector are one kind. One row per (order, kind,
-- pair): the kind's number (`kind`, 0-based, in the order of its first prompt among the pool's
-- prompt_ids, so that with every prompt a kind of its own the kinds are the prompts in prompt_id
-- order), how many prompts it stands for (`prompts`), the pair, lo's credit and the calls.
-- When no call of the cell is swapped the single order is the both order (the same calls): then only
-- 'both' is grouped, and every row says so (`single_is_both`), for the caller to fit it as 'single' too.
WITH systems AS (
    SELECT candidate_id, dense_rank() OVER (ORDER BY candidate_id) - 1 AS code
    FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)
), codes AS (
    SELECT c.cand_idx, s.code FROM candidates c JOIN systems s USING (candidate_id) WHERE c.pool_id = $pool_id
), calls AS (
    SELECT coalesce(v.swapped, true) AS swapped, v.prompt_idx AS unit, ca.code AS a, cb.code AS b,
           CASE WHEN v.value > 0 THEN 1.0 WHEN v.value < 0 THEN 0.0 ELSE 0.5 END AS credit
    FROM verdict_source v
    JOIN codes ca ON ca.cand_idx = v.a_idx
    JOIN codes cb ON cb.cand_idx = v.b_idx
    WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id AND v.format_id = $format_id AND v.decoding = $decoding
      AND v.a_idx <> v.b_idx AND v.value IS NOT NULL
), forward AS MATERIALIZED (   -- per orientation, prompt and pair: lo's credit and the calls
    SELECT swapped, unit, least(a, b) AS lo, greatest(a, b) AS hi,
           sum(CASE WHEN a <= b THEN credit ELSE 1.0 - credit END)::DOUBLE AS credit, count(*)::BIGINT AS n
    FROM calls GROUP BY swapped, unit, least(a, b), greatest(a, b)
), same AS (
    SELECT coalesce(NOT bool_or(swapped), false) AS single_is_both FROM forward
), edges AS (
    SELECT 'both' AS ord, unit, lo, hi, sum(credit)::DOUBLE AS credit, sum(n)::BIGINT AS n
    FROM forward GROUP BY unit, lo, hi
    UNION ALL
    SELECT 'single' AS ord, unit, lo, hi, credit, n FROM forward
    WHERE NOT swapped AND NOT (SELECT single_is_both FROM same)
), tuples AS (        -- each distinct (pair, credit, calls) numbered, so that a prompt's vector is a list of integers
    SELECT lo, hi, credit, n, (row_number() OVER (ORDER BY lo, hi, credit, n))::BIGINT AS tuple
    FROM (SELECT DISTINCT lo, hi, credit, n FROM edges)
), vectors AS (           -- sorted by pair, as a prompt meets a pair once in an order
    SELECT e.ord, e.unit, list_sort(list(t.tuple)) AS vec
    FROM edges e JOIN tuples t USING (lo, hi, credit, n) GROUP BY e.ord, e.unit
), kinds AS (
    SELECT x.ord, x.vec, count(*)::BIGINT AS prompts, min(p.prompt_id) AS first
    FROM vectors x JOIN prompts p ON p.pool_id = $pool_id AND p.prompt_idx = x.unit GROUP BY x.ord, x.vec
), numbered AS (
    SELECT ord, (row_number() OVER (PARTITION BY ord ORDER BY first) - 1)::BIGINT AS kind, prompts,
           unnest(vec) AS tuple
    FROM kinds
)
SELECT k.ord, k.kind, k.prompts, t.lo::BIGINT AS lo, t.hi::BIGINT AS hi, t.credit, t.n,
       (SELECT single_is_both FROM same) AS single_is_both
FROM numbered k JOIN tuples t USING (tuple)
ORDER BY k.ord, k.kind, lo, hi
