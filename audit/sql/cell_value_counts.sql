-- One row per (judge, format, decoding, score, value) of the pool's cells: how many sample-0 calls hold that
-- parsed value (score 'label': the parsed value; 'expected', pointwise formats only: the probability-weighted
-- one, whose scale is not the format's, so scale_0_100 is false there), with the format's kind, pairing and
-- value range. Every cell grouped in one read, not one read per cell: a pointwise call is one per candidate
-- and sample (the store's rule: one row per call), so a pointwise value's calls are its candidates; a
-- comparative cell's rows only say that it has parsed calls (its candidates' scores are means over calls).
WITH counts AS (
    SELECT judge_id, format_id, decoding, 'label' AS score, value, count(*) AS n
    FROM verdict_values
    WHERE pool_id = $pool_id AND sample = 0 AND value IS NOT NULL
    GROUP BY judge_id, format_id, decoding, value
    UNION ALL
    SELECT judge_id, format_id, decoding, 'expected' AS score, expected AS value, count(*) AS n
    FROM verdict_values
    WHERE pool_id = $pool_id AND sample = 0 AND expected IS NOT NULL
      AND format_id IN (SELECT format_id FROM formats WHERE kind = 'pointwise')
    GROUP BY judge_id, format_id, decoding, expected
)
SELECT c.judge_id, j.name AS judge, c.format_id, f.name AS format, c.decoding, c.score, c.value, c.n, f.kind,
       f.pairing, f.value_lo, f.value_hi,
       c.score = 'label' AND coalesce(CAST(json_extract(f.spec, '$.range[0]') AS INTEGER) = 0
                                      AND CAST(json_extract(f.spec, '$.range[1]') AS INTEGER) = 100, false) AS scale_0_100
FROM counts c
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
