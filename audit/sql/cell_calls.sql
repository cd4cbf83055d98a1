-- One row per (judge, format) cell of the pool: its judge calls, how many parsed, the format's
-- kind and nominal levels (range size or label count), and for 0-100 scales the share of parsed
-- values that are multiples of 5; n_expected counts calls with a probability-weighted score.
WITH counts AS (
    SELECT judge_id, format_id,
           count(*) AS n_verdicts,
           count(value) AS n_parsed,
           count(*) FILTER (WHERE value % 5 = 0) AS n_mult5,
           count(expected) AS n_expected
    FROM verdicts
    WHERE pool_id = $pool_id
    GROUP BY judge_id, format_id
),
fmt AS (
    SELECT format_id, name, kind, pairing, value_lo, value_hi,
           CAST(json_extract(spec, '$.range[0]') AS INTEGER) AS range_lo,
           CAST(json_extract(spec, '$.range[1]') AS INTEGER) AS range_hi,
           json_array_length(json_keys(json_extract(spec, '$.labels'))) AS n_labels
    FROM formats
)
SELECT j.judge_id, j.name AS judge, f.format_id, f.name AS format, f.kind, f.pairing,
       f.value_lo, f.value_hi, c.n_verdicts, c.n_parsed, c.n_expected,
       CASE WHEN f.range_lo = 0 AND f.range_hi = 100 AND c.n_parsed > 0
            THEN c.n_mult5 / c.n_parsed END AS mult5_share,
       coalesce(f.range_hi - f.range_lo + 1, f.n_labels) AS nominal_levels
FROM counts c
JOIN judges j USING (judge_id)
JOIN fmt f USING (format_id)
ORDER BY j.name, f.name
