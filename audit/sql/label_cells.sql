-- One row per (judge, format, decoding) cell of the pool with parsed verdicts, and its format's kind:
-- the cells a label queue can draw from. Found by integer keys first (the decoding as a small code, as in
-- cell_calls.sql; another decoding kept as its text), then named; from verdict_values (no answer text).
WITH coded AS (
    SELECT DISTINCT judge_id, format_id,
           CASE decoding WHEN 'greedy' THEN 0 WHEN 'constrained' THEN 1 WHEN 'sampled' THEN 2 END AS code,
           CASE WHEN decoding NOT IN ('greedy', 'constrained', 'sampled') THEN decoding END AS other
    FROM verdict_values
    WHERE pool_id = $pool_id AND value IS NOT NULL
)
SELECT DISTINCT j.name AS judge, f.name AS format,
       coalesce(c.other, CASE c.code WHEN 0 THEN 'greedy' WHEN 1 THEN 'constrained' ELSE 'sampled' END) AS decoding,
       f.kind
FROM coded c JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
ORDER BY judge, format, decoding
