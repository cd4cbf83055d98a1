-- The pairs of judges that share calls, by part: one row per judging of the scope (a judge with a format: with
-- $scoped, the judgings the reading is scoped to, its scope_judgings; else every judging of the pool ($pool_id))
-- and per judge of a lower id that answered at least one same call in that format (by
-- name, decoding, prompt, slot A, slot B, sample): judge, format, against (the judge of the lower id) and
-- n_shared, the calls both answered. Each pair of judges is counted once per format, in the part of its judge
-- of the higher id: a new judge (the highest id) counts its own calls against the others' and leaves their
-- parts as they are. Juries are left out (their rows are their members' votes, not calls of their own). A
-- judge's calls over one format row of a name are one row each (the store's rule); over several format rows
-- of one name a call is counted once (made distinct, only there). $format: one format's parts alone (by name;
-- null: every format's), so that a format's calls alone are read at a time.
-- Two judges' calls of a format are first compared by a summary of each judging (sketches: its number of
-- calls, the sum of the 64-bit hashes h of its call keys and the sum of hi(h) * lo(h), the product of their
-- 32-bit halves: one pass over its calls, no join): two judgings of one format row each with the same summary
-- answered the same calls, so they share all of them (two sets of calls of one size whose two sums agree
-- differ with a chance far below 2^-64). Only the pairs whose
-- summaries differ (or that span several format rows of a name) are joined on the call (keys: the format's
-- least id of its name, decoding, prompt, candidates, sample), the judges of the part on one side, those of
-- a lower id on the other.
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
), scope AS (                  -- the judgings of the reading's scope (their ids, read from no call), or every judging
    SELECT g.judge_id, g.format_id FROM judgings g WHERE NOT $scoped
    UNION ALL
    SELECT g.judge_id, g.format_id FROM judgings g SEMI JOIN scope_judgings s USING (judge_id, format_id) WHERE $scoped
), tops AS (                   -- per format (its key) the highest judge of the scope: the judges below it are read
    SELECT g.format_key, max(g.judge_id) AS top FROM judgings g SEMI JOIN scope s USING (judge_id, format_id) GROUP BY 1
), mine AS (
    SELECT judge_id, format_id, format_key, n_rows FROM judgings SEMI JOIN scope USING (judge_id, format_id)
), theirs AS (
    SELECT g.judge_id, g.format_id, g.format_key, g.n_rows FROM judgings g JOIN tops t USING (format_key)
    WHERE g.judge_id < t.top
), sketches AS (               -- per judging (format row) of the formats read: its calls, the sums of h and of
    SELECT judge_id, format_id, count(*)::BIGINT AS n, sum(h::HUGEINT) AS h1,     -- hi(h) * lo(h) (h: a call
           sum(((h >> 32) * (h & 4294967295))::HUGEINT) AS h2                     -- key's hash; hi, lo: its
    FROM (SELECT v.judge_id, v.format_id,                                         -- 32-bit halves)
                 hash(v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1), v.sample) AS h
          FROM verdict_source_all v JOIN named n USING (format_id)
          WHERE v.pool_id = $pool_id)
    GROUP BY ALL
), compared AS (               -- each judge of a part with each judge of a lower id of its format: n_same when
    SELECT m.judge_id, m.format_key, e.judge_id AS against_id,    -- both answered the same calls, else null
           CASE WHEN m.n_rows = 1 AND e.n_rows = 1 AND sm.n = se.n AND sm.h1 = se.h1 AND sm.h2 = se.h2
                THEN sm.n END AS n_same
    FROM mine m
    JOIN theirs e ON e.format_key = m.format_key AND e.judge_id < m.judge_id
    LEFT JOIN sketches sm ON sm.judge_id = m.judge_id AND sm.format_id = m.format_id
    LEFT JOIN sketches se ON se.judge_id = e.judge_id AND se.format_id = e.format_id
), open AS (                   -- the pairs whose calls are joined
    SELECT DISTINCT judge_id, format_key, against_id FROM compared WHERE n_same IS NULL
), mine_open AS (
    SELECT * FROM mine r SEMI JOIN open o USING (judge_id, format_key)
), theirs_open AS (
    SELECT * FROM theirs r SEMI JOIN open o ON o.against_id = r.judge_id AND o.format_key = r.format_key
), mine_calls AS (
    SELECT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1) AS b_idx, v.sample
    FROM verdict_source_all v JOIN mine_open r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows = 1
    UNION ALL
    SELECT DISTINCT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1), v.sample
    FROM verdict_source_all v JOIN mine_open r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows > 1
), their_calls AS (
    SELECT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1) AS b_idx, v.sample
    FROM verdict_source_all v JOIN theirs_open r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows = 1
    UNION ALL
    SELECT DISTINCT v.judge_id, r.format_key, v.decoding, v.prompt_idx, v.a_idx, coalesce(v.b_idx, -1), v.sample
    FROM verdict_source_all v JOIN theirs_open r USING (judge_id, format_id)
    WHERE v.pool_id = $pool_id AND r.n_rows > 1
), joined AS (
    SELECT m.judge_id, m.format_key, e.judge_id AS against_id, count(*)::BIGINT AS n_shared
    FROM mine_calls m
    JOIN their_calls e ON e.format_key = m.format_key AND e.decoding = m.decoding AND e.prompt_idx = m.prompt_idx
                      AND e.a_idx = m.a_idx AND e.b_idx = m.b_idx AND e.sample = m.sample AND e.judge_id < m.judge_id
    GROUP BY ALL
), shared AS (
    SELECT j.* FROM joined j SEMI JOIN open o USING (judge_id, format_key, against_id)
    UNION ALL
    SELECT judge_id, format_key, against_id, n_same FROM compared WHERE n_same > 0
)
SELECT ja.name AS judge, n.name AS format, jb.name AS against, s.n_shared
FROM shared s
JOIN judges ja ON ja.judge_id = s.judge_id
JOIN judges jb ON jb.judge_id = s.against_id
JOIN named n ON n.format_id = s.format_key
ORDER BY judge, format, against
