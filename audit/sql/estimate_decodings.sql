-- The decodings of one judging's calls (judge_id, format_id) in the pool: one row each, in order. With
-- the judging's (estimate_judgings.sql), the cells an estimate's items come from; a cell whose calls
-- are all unparsed (null value) is listed too: it has no item, so no estimate row.
SELECT DISTINCT decoding FROM verdict_values
WHERE pool_id = $pool_id AND judge_id = $judge_id AND format_id = $format_id
ORDER BY decoding
