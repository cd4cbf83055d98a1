-- The alternative annotator test's accept items: one row per (pointwise cell, candidate that at least
-- two annotators accepted or rejected and the cell scored, annotator of it). The cell is
-- judge/format/decoding (those of $judge, $format, $decoding; a null one: every); y = 1 for the
-- annotator's accept, 0 for a reject; f = the candidate's mean normalised score over the cell's parsed
-- samples, (value - value_lo) / (value_hi - value_lo).
WITH votes AS (
    SELECT cand_idx, annotator, CASE WHEN label = 'accept' THEN 1.0 ELSE 0.0 END AS y
    FROM accept_labels
    WHERE pool_id = $pool_id
), items AS (
    SELECT cand_idx FROM votes GROUP BY cand_idx HAVING count(DISTINCT annotator) >= 2
), points AS (
    SELECT j.name AS judge, f.name AS format, v.decoding, v.a_idx AS cand_idx,
           avg((v.value - f.value_lo) / (f.value_hi - f.value_lo)) AS f
    FROM verdict_source v JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'pointwise' AND v.value IS NOT NULL AND f.value_hi > f.value_lo
      AND v.a_idx IN (SELECT cand_idx FROM items)
      AND ($judge IS NULL OR j.name = $judge) AND ($format IS NULL OR f.name = $format)
      AND ($decoding IS NULL OR v.decoding = $decoding)
    GROUP BY ALL
)
SELECT p.judge, p.format, p.decoding, p.cand_idx::BIGINT AS cand_idx, v.annotator, v.y::DOUBLE AS y,
       p.f::DOUBLE AS f
FROM points p JOIN votes v USING (cand_idx)
ORDER BY p.judge, p.format, p.decoding, p.cand_idx, v.annotator
