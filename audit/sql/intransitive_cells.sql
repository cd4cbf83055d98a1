-- One row per tournament cell of the pool with a parsed sample-0 call between two candidates: the cell's
-- ids (judge_id, format_id, decoding) and its judge's and format's names, in judge, format, decoding order
-- (a row's position is the cell's number in intransitive_calls).
SELECT c.judge_id, c.format_id, c.decoding, j.name AS judge, f.name AS format
FROM (SELECT DISTINCT v.judge_id, v.format_id, v.decoding
      FROM verdict_source v
      SEMI JOIN formats f ON f.format_id = v.format_id AND f.pairing = 'tournament'
      WHERE v.pool_id = $pool_id AND v.sample = 0 AND v.value IS NOT NULL AND v.a_idx <> v.b_idx) c
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
ORDER BY judge, format, c.decoding
