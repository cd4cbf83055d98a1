-- One row per (format, decoding) in which more than half the jury's members have sample-0 calls in
-- the pool (elsewhere no key could be parsed): the jury's cells, each one cell run of its own.
-- Members' calls are read through verdict_source (stored and attached rows).
SELECT v.format_id, v.decoding
FROM verdict_source v
JOIN jury_members jm ON jm.pool_id = v.pool_id AND jm.member_id = v.judge_id
WHERE jm.pool_id = $pool_id AND jm.judge_id = $judge_id AND v.sample = 0
GROUP BY v.format_id, v.decoding
HAVING 2 * count(DISTINCT v.judge_id) > (SELECT count(*) FROM jury_members
                                        WHERE pool_id = $pool_id AND judge_id = $judge_id)
ORDER BY v.format_id, v.decoding
