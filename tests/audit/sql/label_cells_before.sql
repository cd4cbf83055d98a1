-- One row per (judge, format, decoding) cell of the pool with parsed verdicts, and its format's kind:
-- the cells a label queue can draw from.
SELECT DISTINCT j.name AS judge, f.name AS format, v.decoding, f.kind
FROM verdict_source v JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND v.value IS NOT NULL
ORDER BY judge, format, v.decoding
