-- The judgings (judge, format) of the pool's calls in scope that an estimate's items come from: one row
-- each, its ids and names, its format's kind and scale (estimate_decodings.sql lists a judging's
-- decodings: distinct on the two ids alone, this scan is a tenth of one distinct on the decoding too).
WITH judgings AS (
    SELECT DISTINCT judge_id, format_id FROM verdict_values WHERE pool_id = $pool_id
)
SELECT g.judge_id, g.format_id, j.name AS judge, f.name AS format, f.kind, f.value_lo, f.value_hi
FROM judgings g JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
ORDER BY judge, format
