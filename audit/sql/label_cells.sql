-- One row per (judge, format, decoding) cell of the pool with parsed verdicts, and its format's kind:
-- the cells a label queue can draw from. Found by integer keys first (the decoding as a small code,
-- decoding_codes.sql; another decoding kept as its text), then named; from verdict_values (no answer text).
WITH coded AS (
    SELECT DISTINCT judge_id, format_id,
           decoding_code(decoding) AS code, decoding_other(decoding) AS other
    FROM verdict_values
    WHERE pool_id = $pool_id AND value IS NOT NULL
)
SELECT DISTINCT j.name AS judge, f.name AS format,
       decoding_name(c.code, c.other) AS decoding,
       f.kind
FROM coded c JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
ORDER BY judge, format, decoding
