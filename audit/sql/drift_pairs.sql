-- One row per ordered pair of two judges of the pool ($pool_id) that answered at least one same call
-- (format by name, decoding, prompt, slot A, slot B, sample): the pairs a drift can compare, judge against
-- against, with n_shared the calls both answered. Juries are left out (their rows are their members' votes,
-- not calls of their own). For at most 64 judges (drift_pair_judges.sql counts them; drift_pairs_joined.sql
-- joins the calls for more): one pass over the verdicts gives each call the set of judges that answered it
-- as a bit mask, the calls are counted per mask, and a pair's calls are the counts of the masks holding
-- both bits (no join of the calls with themselves).
WITH members AS (
    SELECT judge_id, (row_number() OVER (ORDER BY judge_id) - 1)::INT AS bit
    FROM judges
    WHERE provider <> 'jury' AND judge_id IN (SELECT DISTINCT judge_id FROM verdict_source WHERE pool_id = $pool_id)
), calls AS (
    SELECT bit_or(1::UBIGINT << m.bit) AS mask
    FROM verdict_source v
    JOIN formats f USING (format_id)
    JOIN members m USING (judge_id)
    WHERE v.pool_id = $pool_id
    GROUP BY f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample
), kinds AS (
    SELECT mask, count(*)::BIGINT AS n FROM calls WHERE bit_count(mask) > 1 GROUP BY mask
)
SELECT ja.name AS judge, jb.name AS against, sum(k.n)::BIGINT AS n_shared
FROM kinds k
JOIN members a ON (k.mask >> a.bit) & 1 = 1
JOIN members b ON (k.mask >> b.bit) & 1 = 1 AND b.judge_id <> a.judge_id
JOIN judges ja ON ja.judge_id = a.judge_id
JOIN judges jb ON jb.judge_id = b.judge_id
GROUP BY ja.name, jb.name
ORDER BY judge, against
