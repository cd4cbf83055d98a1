-- One row per (judge, format, decoding) cell of the pool: the median and 95th percentile (linear
-- interpolation) of the time a verdict took, in ms, over the calls that record one. A judge's verdict
-- is one call (every sample); a jury's verdict on a key waits for its slowest member (the members'
-- sample-0 calls on the key, asked side by side).
WITH jury AS (
    SELECT jm.judge_id AS jury_id, jm.member_id FROM jury_members jm WHERE jm.pool_id = $pool_id
),
times AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.latency_ms
    FROM verdict_source v
    JOIN judges j ON j.judge_id = v.judge_id
    WHERE v.pool_id = $pool_id AND j.provider <> 'jury' AND v.latency_ms IS NOT NULL
    UNION ALL
    SELECT y.jury_id, v.format_id, v.decoding, max(v.latency_ms)
    FROM verdict_source v
    JOIN jury y ON y.member_id = v.judge_id
    WHERE v.pool_id = $pool_id AND v.sample = 0 AND v.latency_ms IS NOT NULL
    GROUP BY y.jury_id, v.format_id, v.decoding, v.prompt_idx, v.a_idx, v.b_idx
)
SELECT j.name AS judge, f.name AS format, t.decoding,
       quantile_cont(t.latency_ms, 0.5) AS latency_ms_p50, quantile_cont(t.latency_ms, 0.95) AS latency_ms_p95
FROM times t
JOIN judges j ON j.judge_id = t.judge_id
JOIN formats f ON f.format_id = t.format_id
GROUP BY ALL
ORDER BY judge, format, decoding
