-- One row per (jury of the pool, format, decoding, pair of two of its members, the earlier one in the
-- order given first) where both members judged an item: n_scored = the items both judged, score_corr =
-- the Pearson correlation of their predictions f over them; n_labelled = of those, the items humans
-- labelled, error_corr = the correlation of their errors f - y there. An item is a candidate for a
-- pointwise format (f = its normalised score; y = the mean of its accept labels, accept 1, reject 0) or a
-- pair of two candidates for a comparative one (f = the member's preference for the lower cand_idx: the
-- mean over its calls on the pair in either order of 1 / 0.5 / 0 by the margin's sign; y = the mean of
-- the pair's human labels toward the lower cand_idx). Sample-0 parsed calls only, as the jury votes on.
-- The members' calls are read from verdict_source_all (stored and attached, whatever judges the reading
-- is scoped to): a jury's part of a derived result is computed from its members' verdicts.
WITH members AS (
    SELECT judge_id AS jury_id, member_id, position FROM jury_members WHERE pool_id = $pool_id
), preds AS (
    SELECT v.judge_id, v.format_id, v.decoding,
           CASE WHEN f.kind = 'pointwise' THEN v.a_idx ELSE least(v.a_idx, v.b_idx) END AS lo_idx,
           CASE WHEN f.kind = 'pointwise' THEN -1 ELSE greatest(v.a_idx, v.b_idx) END AS hi_idx,
           avg(CASE WHEN f.kind = 'pointwise' THEN (v.value - f.value_lo) / nullif(f.value_hi - f.value_lo, 0)
                    WHEN v.value = 0 THEN 0.5 WHEN (v.value > 0) = (v.a_idx < v.b_idx) THEN 1.0 ELSE 0.0 END) AS f
    FROM verdict_source_all v JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND v.sample = 0 AND v.value IS NOT NULL
      AND v.judge_id IN (SELECT member_id FROM members)
      AND (f.kind = 'pointwise' OR v.a_idx <> v.b_idx)
    GROUP BY ALL
), humans AS (
    SELECT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx, 'comparative' AS kind,
           avg(CASE WHEN label = 'tie' THEN 0.5 WHEN (label = 'A') = (a_idx < b_idx) THEN 1.0 ELSE 0.0 END) AS y
    FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx
    GROUP BY 1, 2
    UNION ALL
    SELECT cand_idx, -1, 'pointwise', avg(CASE WHEN label = 'accept' THEN 1.0 ELSE 0.0 END)
    FROM accept_labels WHERE pool_id = $pool_id
    GROUP BY 1
)
SELECT jj.name AS judge, f.name AS format, a.decoding, ma.name AS member_a, mb.name AS member_b,
       count(*)::BIGINT AS n_scored, corr(a.f, b.f)::DOUBLE AS score_corr,
       count(h.y)::BIGINT AS n_labelled, corr(a.f - h.y, b.f - h.y)::DOUBLE AS error_corr
FROM members x
JOIN members z ON z.jury_id = x.jury_id AND z.position > x.position
JOIN preds a ON a.judge_id = x.member_id
JOIN preds b ON b.judge_id = z.member_id AND b.format_id = a.format_id AND b.decoding = a.decoding
     AND b.lo_idx = a.lo_idx AND b.hi_idx = a.hi_idx
JOIN formats f ON f.format_id = a.format_id
LEFT JOIN humans h ON h.lo_idx = a.lo_idx AND h.hi_idx = a.hi_idx AND h.kind = f.kind
JOIN judges jj ON jj.judge_id = x.jury_id
JOIN judges ma ON ma.judge_id = x.member_id
JOIN judges mb ON mb.judge_id = z.member_id
GROUP BY jj.name, f.name, a.decoding, ma.name, mb.name, x.position, z.position
ORDER BY judge, format, decoding, x.position, z.position
