-- One row per (judge, comparative format, decoding) cell of the pool: its calls, and its
-- self-comparisons (a candidate against itself): all of them, the parsed ones, and how many of
-- those were answered TIE (margin 0). A failed or unparsed call is no answer, so not a non-TIE.
-- Counted by integer keys first (the decoding as a small code, decoding_codes.sql; another decoding
-- kept as its text), then named: a format's rows of one name are one cell. Read from verdict_values (no
-- answer text: an attached call is its row of attached_ids, its file not read).
WITH coded AS (
    SELECT v.judge_id, v.format_id, v.swapped, v.a_idx = v.b_idx AS self, v.value,
           decoding_code(v.decoding) AS code,
           v.decoding
    FROM verdict_values v
    WHERE v.pool_id = $pool_id AND v.format_id IN (SELECT format_id FROM formats WHERE kind = 'comparative')
),
counted AS (
    SELECT judge_id, format_id, code, CASE WHEN code IS NULL THEN decoding END AS other,
           count(*) AS n_calls,
           count(*) FILTER (WHERE swapped) AS n_reverse_calls,
           count(*) FILTER (WHERE self) AS n_self,
           count(value) FILTER (WHERE self) AS n_self_parsed,
           count(*) FILTER (WHERE self AND value = 0) AS n_self_tie
    FROM coded
    GROUP BY judge_id, format_id, code, other
)
SELECT j.name AS judge, f.name AS format,
       decoding_name(c.code, c.other) AS decoding,
       f.pairing,
       sum(c.n_calls)::BIGINT AS n_calls, sum(c.n_reverse_calls)::BIGINT AS n_reverse_calls,
       sum(c.n_self)::BIGINT AS n_self, sum(c.n_self_parsed)::BIGINT AS n_self_parsed,
       sum(c.n_self_tie)::BIGINT AS n_self_tie
FROM counted c
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
GROUP BY j.name, f.name, 3, f.pairing
ORDER BY j.name, f.name, 3
