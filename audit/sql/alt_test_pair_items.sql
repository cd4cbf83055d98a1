-- The alternative annotator test's pair items: one row per (cell, pair of two candidates of one prompt
-- that at least two annotators labelled and the cell judged, annotator of the pair). The cell is
-- judge/format/decoding (those of $judge, $format, $decoding; a null one: every); the pair
-- (lo_idx, hi_idx), lo_idx < hi_idx; y = the annotator's label toward lo_idx, 1 / 0.5 / 0 as it favours
-- lo_idx / ties / favours hi_idx; f = the cell's preference for lo_idx: comparative, the mean over its
-- parsed calls on the pair in either order (every sample) of 1 / 0.5 / 0 for a margin favouring
-- lo_idx / tying / favouring hi_idx; pointwise, 1 / 0.5 / 0 as lo_idx's mean normalised score over its
-- parsed samples, rounded to 12 decimals, is above / equal to / below hi_idx's.
WITH votes AS (
    SELECT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx, annotator,
           CASE WHEN label = 'tie' THEN 0.5 WHEN (label = 'A') = (a_idx < b_idx) THEN 1.0 ELSE 0.0 END AS y
    FROM pair_labels
    WHERE pool_id = $pool_id AND a_idx <> b_idx
), items AS (
    SELECT lo_idx, hi_idx FROM votes GROUP BY lo_idx, hi_idx HAVING count(DISTINCT annotator) >= 2
), cells AS (
    SELECT j.name AS judge, f.name AS format, v.decoding, f.kind, v.a_idx, v.b_idx, v.value,
           (v.value - f.value_lo) / nullif(f.value_hi - f.value_lo, 0) AS score
    FROM verdict_source v JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND v.value IS NOT NULL
      AND ($judge IS NULL OR j.name = $judge) AND ($format IS NULL OR f.name = $format)
      AND ($decoding IS NULL OR v.decoding = $decoding)
), pairs AS (
    SELECT c.judge, c.format, c.decoding, i.lo_idx, i.hi_idx,
           avg(CASE WHEN c.value = 0 THEN 0.5 WHEN (c.value > 0) = (c.a_idx < c.b_idx) THEN 1.0 ELSE 0.0 END) AS f
    FROM cells c JOIN items i ON i.lo_idx = least(c.a_idx, c.b_idx) AND i.hi_idx = greatest(c.a_idx, c.b_idx)
    WHERE c.kind = 'comparative' AND c.a_idx <> c.b_idx
    GROUP BY ALL
), points AS (
    SELECT judge, format, decoding, a_idx AS cand_idx, round(avg(score), 12) AS s
    FROM cells
    WHERE kind = 'pointwise' AND score IS NOT NULL
      AND a_idx IN (SELECT lo_idx FROM items UNION SELECT hi_idx FROM items)
    GROUP BY ALL
), compared AS (
    SELECT a.judge, a.format, a.decoding, i.lo_idx, i.hi_idx,
           CASE WHEN a.s > b.s THEN 1.0 WHEN a.s < b.s THEN 0.0 ELSE 0.5 END AS f
    FROM items i JOIN points a ON a.cand_idx = i.lo_idx
    JOIN points b ON b.cand_idx = i.hi_idx AND b.judge = a.judge AND b.format = a.format AND b.decoding = a.decoding
), judged AS (
    SELECT * FROM pairs UNION ALL SELECT * FROM compared
)
SELECT j.judge, j.format, j.decoding, j.lo_idx::BIGINT AS lo_idx, j.hi_idx::BIGINT AS hi_idx, v.annotator,
       v.y::DOUBLE AS y, j.f::DOUBLE AS f
FROM judged j JOIN votes v ON v.lo_idx = j.lo_idx AND v.hi_idx = j.hi_idx
ORDER BY j.judge, j.format, j.decoding, j.lo_idx, j.hi_idx, v.annotator
