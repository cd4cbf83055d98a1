-- One row per ordered pair of two judges of the pool ($pool_id) that answered at least one same call
-- (format by name, decoding, prompt, slot A, slot B, sample): the pairs a drift can compare, judge against
-- against, with n_shared the calls both answered. Juries are left out (their rows are their members' votes,
-- not calls of their own). Each call joined with the same call of every other judge: drift_pairs.sql's
-- numbers for more than 64 judges.
WITH calls AS (
    SELECT DISTINCT v.judge_id, f.name AS format, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1) AS b_idx,
           v.sample
    FROM verdict_source v
    JOIN formats f USING (format_id)
    JOIN judges j USING (judge_id)
    WHERE v.pool_id = $pool_id AND j.provider <> 'jury'
)
SELECT ja.name AS judge, jb.name AS against, count(*)::BIGINT AS n_shared
FROM calls a
JOIN calls b ON b.format = a.format AND b.decoding = a.decoding AND b.prompt_idx = a.prompt_idx
            AND b.a_idx = a.a_idx AND b.b_idx = a.b_idx AND b.sample = a.sample AND b.judge_id <> a.judge_id
JOIN judges ja ON ja.judge_id = a.judge_id
JOIN judges jb ON jb.judge_id = b.judge_id
GROUP BY ja.name, jb.name
ORDER BY judge, against
