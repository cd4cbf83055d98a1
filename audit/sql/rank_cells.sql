-- One row per (judge, comparative format, decoding) cell of the pool with a parsed call between two
-- different candidates: the cell's judge and format (ids and names) and its decoding, in the order
-- rank_calls lists its cells (judge, format, decoding). Read from verdict_values, as rank_cell_calls reads them.
SELECT v.judge_id, v.format_id, j.name AS judge, f.name AS format, v.decoding
FROM verdict_values v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx AND v.value IS NOT NULL
GROUP BY v.judge_id, v.format_id, j.name, f.name, v.decoding
ORDER BY j.name, f.name, v.decoding
