-- The accept estimate's items (audit._worth.accept_items), out of core: one row per candidate with a
-- human accept label that a pointwise cell scored (the cell judge/format/decoding, cand_idx, f; n = 1)
-- and one per (cell, f) for the scored candidates without one (n = how many; cand_idx null); f = the
-- mean over the candidate's parsed samples of the normalised score (value - value_lo) / (value_hi - value_lo).
-- stratum: the item's stratum by $strata (null: none; 'score-bin': min(floor(5 f), 4); 'model', 'split',
-- 'candidate_id': the candidate's field, '(none)' where it has no model; 'category': its prompt's,
-- '(none)' where the prompt has none).
WITH points AS (
    SELECT j.name AS judge, f.name AS format, v.decoding, v.a_idx AS cand_idx,
           avg((v.value - f.value_lo) / (f.value_hi - f.value_lo)) AS f
    FROM verdict_source v JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'pointwise' AND v.value IS NOT NULL AND f.value_hi > f.value_lo
    GROUP BY ALL
), labelled AS (
    SELECT DISTINCT cand_idx FROM accept_labels WHERE pool_id = $pool_id
), marked AS (
    SELECT p.*, l.cand_idx IS NOT NULL AS is_labelled,
           CASE $strata WHEN 'score-bin' THEN least(floor(round(p.f, 12) * 5), 4)::BIGINT::VARCHAR
                        WHEN 'model' THEN coalesce(c.model, '(none)') WHEN 'split' THEN c.split
                        WHEN 'candidate_id' THEN c.candidate_id
                        WHEN 'category' THEN coalesce(pr.category, '(none)') END AS stratum
    FROM points p LEFT JOIN labelled l USING (cand_idx)
    LEFT JOIN candidates c ON $strata IS NOT NULL AND c.pool_id = $pool_id AND c.cand_idx = p.cand_idx
    LEFT JOIN prompts pr ON $strata = 'category' AND pr.pool_id = $pool_id AND pr.prompt_idx = c.prompt_idx
)
SELECT judge, format, decoding, is_labelled, (CASE WHEN is_labelled THEN cand_idx END)::BIGINT AS cand_idx,
       f::DOUBLE AS f, stratum, count(*)::BIGINT AS n
FROM marked
GROUP BY judge, format, decoding, is_labelled, 5, f, stratum
ORDER BY judge, format, decoding, is_labelled, cand_idx, f, stratum
