-- One row per (judge, format, decoding) cell of the pool and judge that pays for its calls (the judge
-- itself; for a jury, each member): the calls paid for, their input and output tokens (summed over
-- the calls that report them; every sample of a judge's own calls, the members' sample-0 calls for a
-- jury, whose votes are made of those) and how many calls report tokens.
-- The calls are summed once by integer keys alone (judge, format, the decoding as a small code,
-- decoding_codes.sql, another decoding kept as its text, told by its code so that each call's text is compared
-- once; and whether the call is a sample 0): a few rows per judging. The judges' own sums (every sample; a
-- jury's own rows are its votes, not calls) and the juries' (their members' sample-0 sums, one row per jury
-- a member sits on) are made of those rows, and named last. Counts and sums add up, so the sums of the parts
-- equal the sums over the calls. Joined to the judges and formats per call and grouped by names, the same
-- rows took 0.75 s of a refresh over 55M calls.
WITH calls AS (
    SELECT judge_id, format_id, code, CASE WHEN code IS NULL THEN decoding END AS other, first,
           count(*) AS n_calls, count(tokens_in) AS n_with_tokens, sum(tokens_in) AS tokens_in,
           sum(tokens_out) AS tokens_out
    FROM (SELECT judge_id, format_id, decoding, sample = 0 AS first, tokens_in, tokens_out,
                 decoding_code(decoding) AS code
          FROM verdict_source
          WHERE pool_id = $pool_id)
    GROUP BY judge_id, format_id, code, other, first
),
paid AS (
    SELECT c.judge_id, c.format_id, c.code, c.other, c.judge_id AS payer_id, c.n_calls, c.n_with_tokens,
           c.tokens_in, c.tokens_out
    FROM calls c
    SEMI JOIN judges j ON j.judge_id = c.judge_id AND j.provider <> 'jury'
    UNION ALL
    SELECT y.judge_id, c.format_id, c.code, c.other, c.judge_id, c.n_calls, c.n_with_tokens, c.tokens_in,
           c.tokens_out
    FROM calls c
    JOIN jury_members y ON y.member_id = c.judge_id AND y.pool_id = $pool_id
    WHERE c.first
)
SELECT j.name AS judge, f.name AS format,
       decoding_name(p.code, p.other) AS decoding,
       m.name AS payer, CAST(sum(p.n_calls) AS BIGINT) AS n_calls,
       CAST(sum(p.n_with_tokens) AS BIGINT) AS n_with_tokens, CAST(sum(p.tokens_in) AS BIGINT) AS tokens_in,
       CAST(sum(p.tokens_out) AS BIGINT) AS tokens_out
FROM paid p
JOIN judges j ON j.judge_id = p.judge_id
JOIN judges m ON m.judge_id = p.payer_id
JOIN formats f ON f.format_id = p.format_id
GROUP BY ALL
ORDER BY judge, format, decoding, payer
