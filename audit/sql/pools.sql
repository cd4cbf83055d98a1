-- One row per pool: its name and how many prompts and candidates it holds.
SELECT p.pool_id, p.name,
       (SELECT count(*) FROM prompts q WHERE q.pool_id = p.pool_id) AS n_prompts,
       (SELECT count(*) FROM candidates c WHERE c.pool_id = p.pool_id) AS n_candidates
FROM pools p
ORDER BY p.name
