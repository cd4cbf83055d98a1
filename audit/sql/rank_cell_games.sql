-- One row per (orientation, prompt, system in slot A, system in slot B) of one comparative cell's
-- parsed calls between two different candidates: `swapped` (the call's orientation; unknown counts
-- as not forward, as rank_calls' single order leaves it out), the prompt as
-- its rank among the pool's prompt_ids (`unit`, 0-based, in prompt_id order), the systems as their
-- rank among the pool's candidate_ids (`a_code`, `b_code`, 0-based, in candidate_id order), slot A's
-- credit summed over those calls (a margin > 0 one win, < 0 none, 0 half) and how many calls.
WITH units AS (
    SELECT prompt_idx, dense_rank() OVER (ORDER BY prompt_id) - 1 AS unit
    FROM prompts WHERE pool_id = $pool_id
), systems AS (
    SELECT candidate_id, dense_rank() OVER (ORDER BY candidate_id) - 1 AS code
    FROM (SELECT DISTINCT candidate_id FROM candidates WHERE pool_id = $pool_id)
), codes AS (
    SELECT c.cand_idx, s.code FROM candidates c JOIN systems s USING (candidate_id) WHERE c.pool_id = $pool_id
)
SELECT coalesce(v.swapped, true) AS swapped, u.unit::BIGINT AS unit, ca.code::BIGINT AS a_code, cb.code::BIGINT AS b_code,
       sum(CASE WHEN v.value > 0 THEN 1.0 WHEN v.value < 0 THEN 0.0 ELSE 0.5 END)::DOUBLE AS credit,
       count(*)::BIGINT AS n
FROM verdict_source v
JOIN units u ON u.prompt_idx = v.prompt_idx
JOIN codes ca ON ca.cand_idx = v.a_idx
JOIN codes cb ON cb.cand_idx = v.b_idx
WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id AND v.format_id = $format_id AND v.decoding = $decoding
  AND v.a_idx <> v.b_idx AND v.value IS NOT NULL
GROUP BY coalesce(v.swapped, true), u.unit, ca.code, cb.code
ORDER BY 1, u.unit, ca.code, cb.code
