-- The pairs of judges that share calls, by part: one row per judging the reading is scoped to (verdict_source's
-- judgings: a judge with a format, by name; every judging of the pool ($pool_id) when unscoped) and per judge of a
-- lower id that answered at least one same call in that format (by name, decoding, prompt, slot A, slot B,
-- sample): judge, format, against (the judge of the lower id) and n_shared, the calls both answered. Each pair
-- of judges is counted once per format, in the part of its judge of the higher id: a new judge (the highest id)
-- counts its own calls against the others' and leaves their parts as they are. Juries are left out (their rows
-- are their members' votes, not calls of their own). A judge's calls over one format row of a name are one row
-- each (the store's rule); over several format rows of one name a call is counted once (made distinct, only
-- there). The two sides are joined on the call (keys: the format's least id of its name, decoding, prompt,
-- candidates, sample), the judges of the part on one side, those of a lower id on the other. $format: one
-- format's parts alone (by name; null: every format's), so that a format's calls alone are joined at a time.
WITH named AS (
    SELECT format_id, name, min(format_id) OVER (PARTITION BY name) AS format_key FROM formats
    WHERE $format IS NULL OR name = $format
), judgings AS (
    SELECT v.judge_id, v.format_id, n.name AS format, n.format_key,
           count(*) OVER (PARTITION BY v.judge_id, n.name) AS n_rows
    FROM (SELECT DISTINCT judge_id, format_id FROM verdict_source_all WHERE pool_id = $pool_id) v
    JOIN named n USING (format_id)
    JOIN judges j USING (judge_id)
    WHERE j.provider <> 'jury'
), scope AS (
    SELECT DISTINCT judge_id, format_id FROM verdict_source WHERE pool_id = $pool_id
), tops AS (                   -- per format (its key) the highest judge of the scope: the judges below it are read
    SELECT g.format_key, max(g.judge_id) AS top FROM judgings g SEMI JOIN scope s USING (judge_id, format_id) GROUP BY 1
), mine AS (
    SELECT judge_id, format_id, format_key, n_rows FROM judgings SEMI JOIN scope USING (judge_id, format_id)
), theirs AS (
    SELECT g.judge_id, g.format_id, g.format_key, g.n_rows FROM judgings g JOIN tops t USING (format_key)
    WHERE g.judge_id < t.top
), mine_calls AS (
    SELECT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1) AS b_idx, v.sample
    FROM verdict_source_all v JOIN mine r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows = 1
    UNION ALL
    SELECT DISTINCT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1), v.sample
    FROM verdict_source_all v JOIN mine r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows > 1
), their_calls AS (
    SELECT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1) AS b_idx, v.sample
    FROM verdict_source_all v JOIN theirs r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows = 1
    UNION ALL
    SELECT DISTINCT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1), v.sample
    FROM verdict_source_all v JOIN theirs r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows > 1
), shared AS (
    SELECT m.judge_id, m.format_key, e.judge_id AS against_id, count(*)::BIGINT AS n_shared
    FROM mine_calls m
    JOIN their_calls e ON e.format_key = m.format_key AND e.decoding = m.decoding AND e.prompt_idx = m.prompt_idx
                      AND e.a_idx = m.a_idx AND e.b_idx = m.b_idx AND e.sample = m.sample AND e.judge_id < m.judge_id
    GROUP BY ALL
)
SELECT ja.name AS judge, n.name AS format, jb.name AS against, s.n_shared
FROM shared s
JOIN judges ja ON ja.judge_id = s.judge_id
JOIN judges jb ON jb.judge_id = s.against_id
JOIN named n ON n.format_id = s.format_key
ORDER BY judge, format, against
