-- The pool's repeated judge calls read once for repeat consistency, aggregated. A unit is a call without
-- its sample index (prompt, slot A, slot B; b_idx -1 for a pointwise call); the verdict source holds a
-- call (a unit and sample) once (the store's rule, kept for attached files too), so a unit with two
-- samples has one with sample > 0, and only such units are read. Two kinds of row (`part`): 'cell', one
-- per (judge, format, decoding) cell with a repeated unit, n = the most samples of any of its units;
-- 'value', one per (cell, unit with >= 2 parsed samples, parsed value or NaN for the unparsed ones), in
-- cell, prompt_idx, a_idx, b_idx order: n = the unit's samples with that value, purity_sum / purity_n =
-- the sum and count over its sample-0 rows of Σ p² / (Σ p)² of the answer distribution (where there is
-- one). No NULLs (the rows go to numpy): a 'cell' row's unit columns are -1, its value NaN.
WITH repeated AS (
    SELECT DISTINCT judge_id, format_id, decoding, prompt_idx, a_idx, coalesce(b_idx, -1) AS b_idx
    FROM verdict_source
    WHERE pool_id = $pool_id AND sample > 0
), rows AS (
    SELECT * FROM (
        SELECT judge_id, format_id, decoding, prompt_idx, a_idx, coalesce(b_idx, -1) AS b_idx, sample,
               CASE WHEN NOT isnan(value) THEN value END AS value, answer_probs
        FROM verdict_source
        WHERE pool_id = $pool_id) v
    SEMI JOIN repeated r
        ON r.judge_id = v.judge_id AND r.format_id = v.format_id AND r.decoding = v.decoding
       AND r.prompt_idx = v.prompt_idx AND r.a_idx = v.a_idx AND r.b_idx = v.b_idx
), units AS MATERIALIZED (
    SELECT judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, count(*) AS n, count(value) AS n_parsed
    FROM rows
    GROUP BY judge_id, format_id, decoding, prompt_idx, a_idx, b_idx
), many AS (
    SELECT * FROM rows r
    SEMI JOIN (SELECT * FROM units WHERE n_parsed >= 2) u
        ON u.judge_id = r.judge_id AND u.format_id = r.format_id AND u.decoding = r.decoding
       AND u.prompt_idx = r.prompt_idx AND u.a_idx = r.a_idx AND u.b_idx = r.b_idx
), purity AS (
    SELECT *, coalesce(list_inner_product(probs, probs) / pow(list_sum(probs), 2), 'NaN'::DOUBLE) AS p
    FROM (SELECT *, map_values(json_transform(answer_probs, '"MAP(VARCHAR, DOUBLE)"')) AS probs FROM many)
)
SELECT 'cell' AS part, judge_id, format_id, decoding, -1 AS prompt_idx, -1 AS a_idx, -1 AS b_idx,
       'NaN'::DOUBLE AS value, max(n)::BIGINT AS n, 0::DOUBLE AS purity_sum, 0::BIGINT AS purity_n
FROM units
GROUP BY judge_id, format_id, decoding
UNION ALL
SELECT 'value', judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, coalesce(value, 'NaN'::DOUBLE),
       count(*)::BIGINT, coalesce(sum(p) FILTER (WHERE sample = 0 AND NOT isnan(p)), 0)::DOUBLE,
       count(*) FILTER (WHERE sample = 0 AND NOT isnan(p))::BIGINT
FROM purity
GROUP BY judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, value
ORDER BY part, judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, value
