-- One row per (judge, format, decoding) cell of the pool: its judge calls, how many parsed, how
-- many carry a probability-weighted (expected) score, the format's kind and nominal levels (range
-- size or label count), and whether it is a 0-100 scale (its share of multiples of 5 is taken from
-- the parsed values themselves, in numpy: a modulo over every verdict here costs more than the
-- rest). decoding: 'greedy' (the paper's protocol) or 'constrained' (to the format's labels).
-- The counts are of sample 0 (the `single` aggregate); the *_all counts are of every sample, and
-- repeated says whether any call was asked more than once (then the cell also has a `mean`). Read from
-- verdict_values: the counts need no answer text, so an attached call is its row of attached_ids, its file not read.
WITH coded AS (   -- the decoding as a small code (decoding_codes.sql: another kept as its text), grouped
    SELECT judge_id, format_id, sample, value, expected,   -- by integer keys
           decoding_code(decoding) AS code, decoding
    FROM verdict_values
    WHERE pool_id = $pool_id
),
grouped AS (
    SELECT judge_id, format_id, code, CASE WHEN code IS NULL THEN decoding END AS other, sample = 0 AS first,
           count(*) AS n, count(value) AS n_value, count(expected) AS n_expected, max(sample) AS last_sample
    FROM coded
    GROUP BY judge_id, format_id, code, other, sample = 0
),
counts AS (   -- grouped twice: by cell and whether sample 0, then by cell (plain counts, no FILTER, over
    SELECT judge_id, format_id,   -- every call: measured at 1M candidates, about half the time)
           decoding_name(code, other) AS decoding,
           coalesce(sum(n) FILTER (WHERE first), 0)::BIGINT AS n_verdicts,
           coalesce(sum(n_value) FILTER (WHERE first), 0)::BIGINT AS n_parsed,
           coalesce(sum(n_expected) FILTER (WHERE first), 0)::BIGINT AS n_expected,
           sum(n)::BIGINT AS n_verdicts_all,
           sum(n_value)::BIGINT AS n_parsed_all,
           sum(n_expected)::BIGINT AS n_expected_all,
           max(last_sample) > 0 AS repeated
    FROM grouped
    GROUP BY judge_id, format_id, code, other
),
fmt AS (
    SELECT format_id, name, kind, pairing, value_lo, value_hi,
           CAST(json_extract(spec, '$.range[0]') AS INTEGER) AS range_lo,
           CAST(json_extract(spec, '$.range[1]') AS INTEGER) AS range_hi,
           json_array_length(json_keys(json_extract(spec, '$.labels'))) AS n_labels
    FROM formats
)
SELECT j.judge_id, j.name AS judge, f.format_id, f.name AS format, c.decoding, f.kind, f.pairing,
       f.value_lo, f.value_hi, c.n_verdicts, c.n_parsed, c.n_expected,
       c.n_verdicts_all, c.n_parsed_all, c.n_expected_all, c.repeated,
       coalesce(f.range_lo = 0 AND f.range_hi = 100, false) AS scale_0_100,
       coalesce(f.range_hi - f.range_lo + 1, f.n_labels) AS nominal_levels
FROM counts c
JOIN judges j USING (judge_id)
JOIN fmt f USING (format_id)
ORDER BY j.name, f.name, c.decoding
