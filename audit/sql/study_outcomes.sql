-- One row per judged outcome of a study: (condition, seed, prompt, evaluation judge) with the
-- covariates of the adjusted contrasts. Outcomes that did not parse in both orders are left out.
SELECT g.condition, g.seed, p.prompt_id, j.name AS judge, e.outcome,
       g.answer_len, g.ref_len, g.markdown
FROM evaluations e
JOIN studies s ON s.study_id = e.study_id
JOIN generations g ON g.study_id = e.study_id AND g.condition = e.condition AND g.seed = e.seed
                  AND g.prompt_idx = e.prompt_idx
JOIN prompts p ON p.pool_id = s.pool_id AND p.prompt_idx = e.prompt_idx
JOIN judges j ON j.judge_id = e.judge_id
WHERE s.name = $study AND e.outcome IS NOT NULL
ORDER BY judge, g.condition, g.seed, p.prompt_id
