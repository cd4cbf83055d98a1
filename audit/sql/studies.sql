-- One row per evaluation study: its pool, conditions, held-out prompts judged and outcomes stored.
SELECT s.name AS study, pl.name AS pool, s.created_at,
       (SELECT count(DISTINCT g.condition) FROM generations g WHERE g.study_id = s.study_id) AS n_conditions,
       (SELECT count(DISTINCT g.prompt_idx) FROM generations g WHERE g.study_id = s.study_id) AS n_prompts,
       (SELECT count(*) FROM generations g WHERE g.study_id = s.study_id) AS n_generations,
       (SELECT count(*) FROM evaluations e WHERE e.study_id = s.study_id AND e.outcome IS NOT NULL) AS n_outcomes
FROM studies s
JOIN pools pl ON pl.pool_id = s.pool_id
ORDER BY s.created_at, s.name
