-- One row per (tournament cell, kind of prompt): the prompts with at least one triad of candidates whose
-- three pairs each have a decisive verdict, grouped by their n_cycles and n_triads (a prompt's kind):
-- n_triads = those triads, n_cycles = those whose three verdicts form a cycle (x beats y, y beats z, z
-- beats x), prompts = how many prompts are of that kind. A pair's verdict is decisive when its sample-0
-- parsed calls (one order, or both) all prefer the same candidate: each call's margin turned toward the
-- pair's lower cand_idx, none a tie, all of one sign. A tournament cell: a judge, format (pairing
-- tournament) and decoding. In judge, format, decoding, n_cycles, n_triads order. Grouped and joined on
-- the ids (the names joined last); a pair's two candidates are of one prompt, so a pair (and a triad's
-- pairs, which share candidates) is found by its cand_idx alone.
WITH edges AS MATERIALIZED (
    SELECT judge_id, format_id, decoding, any_value(prompt_idx) AS prompt_idx, lo_idx, hi_idx, min(s) AS s
    FROM (SELECT v.judge_id, v.format_id, v.decoding, v.prompt_idx,
                 least(v.a_idx, v.b_idx) AS lo_idx, greatest(v.a_idx, v.b_idx) AS hi_idx,
                 (sign(v.value) * CASE WHEN v.a_idx < v.b_idx THEN 1 ELSE -1 END)::TINYINT AS s
          FROM verdict_source v
          SEMI JOIN formats f ON f.format_id = v.format_id AND f.pairing = 'tournament'
          WHERE v.pool_id = $pool_id AND v.sample = 0 AND v.value IS NOT NULL AND v.a_idx <> v.b_idx)
    GROUP BY judge_id, format_id, decoding, lo_idx, hi_idx
    HAVING min(s) = max(s) AND min(s) <> 0
), triads AS (
    SELECT e1.judge_id, e1.format_id, e1.decoding, e1.prompt_idx, e1.s AS s_xy, e2.s AS s_yz, e3.s AS s_xz
    FROM edges e1
    JOIN edges e2 ON e2.judge_id = e1.judge_id AND e2.format_id = e1.format_id AND e2.decoding = e1.decoding
         AND e2.lo_idx = e1.hi_idx
    JOIN edges e3 ON e3.judge_id = e1.judge_id AND e3.format_id = e1.format_id AND e3.decoding = e1.decoding
         AND e3.lo_idx = e1.lo_idx AND e3.hi_idx = e2.hi_idx
), counted AS (
    SELECT judge_id, format_id, decoding, prompt_idx, count(*)::BIGINT AS n_triads,
           count(*) FILTER (WHERE s_xy = s_yz AND s_xz = -s_xy)::BIGINT AS n_cycles
    FROM triads
    GROUP BY judge_id, format_id, decoding, prompt_idx
), kinds AS (
    SELECT judge_id, format_id, decoding, n_cycles, n_triads, count(*)::BIGINT AS prompts
    FROM counted
    GROUP BY judge_id, format_id, decoding, n_cycles, n_triads
)
SELECT j.name AS judge, f.name AS format, k.decoding, k.n_cycles, k.n_triads, k.prompts
FROM kinds k JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
ORDER BY judge, format, k.decoding, k.n_cycles, k.n_triads
