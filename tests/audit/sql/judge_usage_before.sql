-- One row per (judge, format, decoding) cell of the pool and judge that pays for its calls (the judge
-- itself; for a jury, each member): the calls paid for, their input and output tokens (summed over
-- the calls that report them; every sample of a judge's own calls, the members' sample-0 calls for a
-- jury, whose votes are made of those) and how many calls report tokens.
WITH jury AS (
    SELECT jm.judge_id AS jury_id, jm.member_id
    FROM jury_members jm
    WHERE jm.pool_id = $pool_id
),
paid AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.judge_id AS payer_id, v.tokens_in, v.tokens_out
    FROM verdict_source v
    JOIN judges j ON j.judge_id = v.judge_id
    WHERE v.pool_id = $pool_id AND j.provider <> 'jury'
    UNION ALL
    SELECT y.jury_id, v.format_id, v.decoding, v.judge_id, v.tokens_in, v.tokens_out
    FROM verdict_source v
    JOIN jury y ON y.member_id = v.judge_id
    WHERE v.pool_id = $pool_id AND v.sample = 0
)
SELECT j.name AS judge, f.name AS format, p.decoding, m.name AS payer, count(*) AS n_calls,
       count(p.tokens_in) AS n_with_tokens, CAST(sum(p.tokens_in) AS BIGINT) AS tokens_in,
       CAST(sum(p.tokens_out) AS BIGINT) AS tokens_out
FROM paid p
JOIN judges j ON j.judge_id = p.judge_id
JOIN judges m ON m.judge_id = p.payer_id
JOIN formats f ON f.format_id = p.format_id
GROUP BY ALL
ORDER BY judge, format, decoding, payer
