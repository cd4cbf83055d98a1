-- The winrate estimate's items against system $baseline (audit._worth.winrate_items), out of core: one
-- row per labelled item (cell judge/format/decoding, system s, prompt_idx, the pair lo_idx/hi_idx,
-- s_idx, f; n = 1) and one per (cell, system, f) for the items without a human label (n = how many;
-- prompt and pair null). An item is a prompt that s and the baseline both answered and the cell
-- judged; f = the cell's preference for s: pointwise 1 / 0.5 / 0 as s's mean normalised score,
-- rounded to 12 decimals, is above / equal to / below the baseline's; comparative the mean over the
-- pair's parsed calls in either order of 1 / 0.5 / 0 for a margin favouring s / tying / the baseline.
-- stratum: the item's stratum by $strata (null: none; 'score-bin': min(floor(5 f), 4); 'model', 'split',
-- 'candidate_id': s's candidate's field on the prompt, '(none)' where it has no model; 'category': the
-- prompt's, '(none)' where it has none). The verdicts are grouped by the cells' ids, the names joined
-- to the counts; a comparative call is read only where its pair is one of a system with the baseline.
WITH cands AS (
    SELECT cand_idx, prompt_idx, candidate_id FROM candidates WHERE pool_id = $pool_id
), sb AS (
    SELECT c.prompt_idx, c.candidate_id AS system, c.cand_idx AS s_idx, b.cand_idx AS b_idx,
           least(c.cand_idx, b.cand_idx) AS lo_idx, greatest(c.cand_idx, b.cand_idx) AS hi_idx
    FROM cands c JOIN cands b ON b.prompt_idx = c.prompt_idx AND b.candidate_id = $baseline
    WHERE c.candidate_id <> $baseline
), points AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.a_idx AS cand_idx,
           round(avg((v.value - f.value_lo) / (f.value_hi - f.value_lo)), 12) AS f
    FROM verdict_source v JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'pointwise' AND v.value IS NOT NULL AND f.value_hi > f.value_lo
    GROUP BY ALL
), pairs AS (
    SELECT v.judge_id, v.format_id, v.decoding, sb.system, sb.prompt_idx, sb.lo_idx, sb.hi_idx, sb.s_idx,
           avg(CASE WHEN v.value = 0 THEN 0.5 WHEN (v.value > 0) = (v.a_idx < v.b_idx) THEN 1.0 ELSE 0.0 END) AS f
    FROM verdict_source v JOIN formats f USING (format_id)
    JOIN sb ON sb.lo_idx = least(v.a_idx, v.b_idx) AND sb.hi_idx = greatest(v.a_idx, v.b_idx)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx AND v.value IS NOT NULL
    GROUP BY ALL
), labelled AS (
    SELECT DISTINCT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx
    FROM pair_labels WHERE pool_id = $pool_id AND a_idx <> b_idx
), items AS (
    SELECT ps.judge_id, ps.format_id, ps.decoding, sb.system, sb.prompt_idx, sb.lo_idx, sb.hi_idx, sb.s_idx,
           CASE WHEN ps.f > pb.f THEN 1.0 WHEN ps.f < pb.f THEN 0.0 ELSE 0.5 END AS f
    FROM sb JOIN points ps ON ps.cand_idx = sb.s_idx
    JOIN points pb ON pb.cand_idx = sb.b_idx AND pb.judge_id = ps.judge_id AND pb.format_id = ps.format_id
         AND pb.decoding = ps.decoding
    UNION ALL
    SELECT judge_id, format_id, decoding, system, prompt_idx, lo_idx, hi_idx, s_idx,
           CASE WHEN s_idx = lo_idx THEN f ELSE 1.0 - f END AS f
    FROM pairs
), marked AS (
    SELECT i.*, l.lo_idx IS NOT NULL AS is_labelled,
           CASE $strata WHEN 'score-bin' THEN least(floor(round(i.f, 12) * 5), 4)::BIGINT::VARCHAR
                        WHEN 'model' THEN coalesce(c.model, '(none)') WHEN 'split' THEN c.split
                        WHEN 'candidate_id' THEN c.candidate_id
                        WHEN 'category' THEN coalesce(pr.category, '(none)') END AS stratum
    FROM items i LEFT JOIN labelled l ON l.lo_idx = i.lo_idx AND l.hi_idx = i.hi_idx
    LEFT JOIN candidates c ON $strata IS NOT NULL AND c.pool_id = $pool_id AND c.cand_idx = i.s_idx
    LEFT JOIN prompts pr ON $strata = 'category' AND pr.pool_id = $pool_id AND pr.prompt_idx = i.prompt_idx
), counted AS (
    SELECT judge_id, format_id, decoding, system, is_labelled,
           (CASE WHEN is_labelled THEN prompt_idx END)::BIGINT AS prompt_idx,
           (CASE WHEN is_labelled THEN lo_idx END)::BIGINT AS lo_idx,
           (CASE WHEN is_labelled THEN hi_idx END)::BIGINT AS hi_idx,
           (CASE WHEN is_labelled THEN s_idx END)::BIGINT AS s_idx,
           f::DOUBLE AS f, stratum, count(*)::BIGINT AS n
    FROM marked
    GROUP BY judge_id, format_id, decoding, system, is_labelled, 6, 7, 8, 9, f, stratum
)
SELECT j.name AS judge, fm.name AS format, c.decoding, c.system, c.is_labelled, c.prompt_idx, c.lo_idx,
       c.hi_idx, c.s_idx, c.f, c.stratum, c.n
FROM counted c JOIN judges j USING (judge_id) JOIN formats fm USING (format_id)
ORDER BY judge, format, decoding, system, is_labelled, prompt_idx, lo_idx, hi_idx, s_idx, f, stratum
