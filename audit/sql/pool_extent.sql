-- One row: the pool's number of candidates and the range of its prompt indices (0 and -1 for a
-- pool without candidates), from which the audit cuts its blocks of whole prompts.
SELECT count(*) AS n_candidates, coalesce(min(prompt_idx), 0) AS prompt_lo,
       coalesce(max(prompt_idx), -1) AS prompt_hi
FROM candidates
WHERE pool_id = $pool_id
