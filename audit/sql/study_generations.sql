-- One row per generated answer of a study, with its prompt and the reference-top answer it was
-- judged against, and the outcome under each evaluation judge as a JSON object judge -> outcome.
SELECT g.condition, g.seed, g.train_run, g.base_model, p.prompt_id, p.prompt, g.answer,
       r.response AS reference_answer, g.answer_len, g.ref_len, g.markdown, g.tokens_out, g.truncated,
       (SELECT to_json(map(list(j.name ORDER BY j.name), list(e.outcome ORDER BY j.name)))
        FROM evaluations e JOIN judges j ON j.judge_id = e.judge_id
        WHERE e.study_id = g.study_id AND e.condition = g.condition AND e.seed = g.seed
          AND e.prompt_idx = g.prompt_idx) AS outcomes
FROM generations g
JOIN studies s ON s.study_id = g.study_id
JOIN prompts p ON p.pool_id = s.pool_id AND p.prompt_idx = g.prompt_idx
JOIN candidates r ON r.pool_id = s.pool_id AND r.cand_idx = g.ref_idx
WHERE s.name = $study
ORDER BY p.prompt_id, g.condition, g.seed
