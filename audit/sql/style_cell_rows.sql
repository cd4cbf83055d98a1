-- One row per group of one comparative cell's parsed calls between two different systems that the
-- style fit weighs alike: the prompt (`unit`: its rank among the pool's prompt_ids, 0-based; 0 on
-- every row when $by_prompt is false), the systems in slot A and slot B (`a_code`, `b_code`: their
-- rank among the pool's candidate_ids, 0-based), the outcome y (1 slot A preferred, 0 slot B, 0.5 a
-- tie), both responses' style counts (the relation `style_counts` the caller registers: cand_idx,
-- chars, headers, lists, bold), and `n`, the number of calls the row stands for.
WITH units AS (
    SELECT prompt_idx, dense_rank() OVER (ORDER BY prompt_id) - 1 AS unit
    FROM prompts WHERE pool_id = $pool_id
), systems AS (
    SELECT candidate_id, dense_rank() OVER (ORDER BY candidate_id) - 1 AS code
    FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)
), codes AS (
    SELECT c.cand_idx, s.code FROM candidates c JOIN systems s USING (candidate_id) WHERE c.pool_id = $pool_id
)
SELECT (CASE WHEN $by_prompt THEN u.unit ELSE 0 END)::BIGINT AS unit,
       ca.code::BIGINT AS a_code, cb.code::BIGINT AS b_code,
       (CASE WHEN v.value > 0 THEN 1.0 WHEN v.value < 0 THEN 0.0 ELSE 0.5 END)::DOUBLE AS y,
       sa.chars AS a_chars, sa.headers AS a_headers, sa.lists AS a_lists, sa.bold AS a_bold,
       sb.chars AS b_chars, sb.headers AS b_headers, sb.lists AS b_lists, sb.bold AS b_bold,
       count(*)::BIGINT AS n
FROM verdict_source v
JOIN units u ON u.prompt_idx = v.prompt_idx
JOIN codes ca ON ca.cand_idx = v.a_idx
JOIN codes cb ON cb.cand_idx = v.b_idx
JOIN style_counts sa ON sa.cand_idx = v.a_idx
JOIN style_counts sb ON sb.cand_idx = v.b_idx
WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id AND v.format_id = $format_id AND v.decoding = $decoding
  AND ca.code <> cb.code AND v.value IS NOT NULL
GROUP BY ALL
ORDER BY ALL
