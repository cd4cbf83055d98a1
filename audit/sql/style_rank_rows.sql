-- The style fit's rows of every comparative cell of the pool, read in one pass: one row per (cell,
-- group of its parsed calls between two different systems that the style fit weighs alike). The cell
-- (judge, format: names; decoding), the prompt (`unit`: its rank among the pool's prompt_ids, 0-based;
-- 0 on every row when $by_prompt is false), the systems in slot A and slot B (`a_code`, `b_code`: their
-- rank among the pool's candidate_ids, 0-based), the outcome y (1 slot A preferred, 0 slot B, 0.5 a
-- tie), both responses' style counts (the relation `style_counts` the caller registers: cand_idx, chars,
-- headers, lists, bold) and `n`, the number of calls the row stands for. In judge, format, decoding
-- order (style_cells'), then by every other column. A candidate's
-- system code and style counts are joined once per slot (one table of both), the calls grouped on
-- prompt_idx and the prompts' ranks joined to the groups.
WITH units AS (
    SELECT prompt_idx, dense_rank() OVER (ORDER BY prompt_id) - 1 AS unit
    FROM prompts WHERE pool_id = $pool_id
), systems AS (
    SELECT candidate_id, dense_rank() OVER (ORDER BY candidate_id) - 1 AS code
    FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)
), styled AS (
    SELECT c.cand_idx, s.code, st.chars, st.headers, st.lists, st.bold
    FROM candidates c JOIN systems s USING (candidate_id) JOIN style_counts st ON st.cand_idx = c.cand_idx
    WHERE c.pool_id = $pool_id
), grouped AS (
    SELECT v.judge_id, v.format_id, v.decoding,
           CASE WHEN $by_prompt THEN v.prompt_idx ELSE -1 END AS prompt_idx,
           ca.code::BIGINT AS a_code, cb.code::BIGINT AS b_code,
           (CASE WHEN v.value > 0 THEN 1.0 WHEN v.value < 0 THEN 0.0 ELSE 0.5 END)::DOUBLE AS y,
           ca.chars AS a_chars, ca.headers AS a_headers, ca.lists AS a_lists, ca.bold AS a_bold,
           cb.chars AS b_chars, cb.headers AS b_headers, cb.lists AS b_lists, cb.bold AS b_bold,
           count(*)::BIGINT AS n
    FROM verdict_source v
    SEMI JOIN formats f ON f.format_id = v.format_id AND f.kind = 'comparative'
    JOIN styled ca ON ca.cand_idx = v.a_idx
    JOIN styled cb ON cb.cand_idx = v.b_idx
    WHERE v.pool_id = $pool_id AND ca.code <> cb.code AND v.value IS NOT NULL
    GROUP BY ALL
)
SELECT j.name AS judge, f.name AS format, g.decoding, coalesce(u.unit, 0)::BIGINT AS unit, g.a_code, g.b_code, g.y,
       g.a_chars, g.a_headers, g.a_lists, g.a_bold, g.b_chars, g.b_headers, g.b_lists, g.b_bold, g.n
FROM grouped g
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
LEFT JOIN units u ON u.prompt_idx = g.prompt_idx
ORDER BY judge, format, g.decoding, unit, g.a_code, g.b_code, g.y, g.a_chars, g.a_headers, g.a_lists, g.a_bold,
         g.b_chars, g.b_headers, g.b_lists, g.b_bold, g.n
