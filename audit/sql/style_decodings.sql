-- One row per decoding of the pool's parsed comparative calls, in order: the row's position (1-based) is
-- the decoding's number in style_rank_calls (its list of decodings).
SELECT DISTINCT v.decoding
FROM verdict_source v
SEMI JOIN formats f ON f.format_id = v.format_id AND f.kind = 'comparative'
WHERE v.pool_id = $pool_id AND v.value IS NOT NULL
ORDER BY v.decoding
