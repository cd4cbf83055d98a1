-- One row per (judge, comparative format, decoding) cell of the pool: its calls, and its
-- self-comparisons (a candidate against itself): all of them, the parsed ones, and how many of
-- those were answered TIE (margin 0). A failed or unparsed call is no answer, so not a non-TIE.
SELECT j.name AS judge, f.name AS format, v.decoding, f.pairing,
       count(*) AS n_calls,
       count(*) FILTER (WHERE v.swapped) AS n_reverse_calls,
       count(*) FILTER (WHERE v.a_idx = v.b_idx) AS n_self,
       count(v.value) FILTER (WHERE v.a_idx = v.b_idx) AS n_self_parsed,
       count(*) FILTER (WHERE v.a_idx = v.b_idx AND v.value = 0) AS n_self_tie
FROM verdict_source v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'comparative'
GROUP BY j.name, f.name, v.decoding, f.pairing
ORDER BY j.name, f.name, v.decoding
