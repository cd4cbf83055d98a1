-- One row per (tournament cell, prompt) with at least one triad of candidates whose three pairs each
-- have a decisive verdict: n_triads = those triads, n_cycles = those whose three verdicts form a cycle
-- (x beats y, y beats z, z beats x). A pair's verdict is decisive when its sample-0 parsed calls (one
-- order, or both) all prefer the same candidate: each call's margin turned toward the pair's lower
-- cand_idx, none a tie, all of one sign. A tournament cell: a judge, format (pairing tournament) and
-- decoding.
WITH calls AS (
    SELECT j.name AS judge, f.name AS format, v.decoding, v.prompt_idx,
           least(v.a_idx, v.b_idx) AS lo_idx, greatest(v.a_idx, v.b_idx) AS hi_idx,
           sign(v.value) * CASE WHEN v.a_idx < v.b_idx THEN 1 ELSE -1 END AS s
    FROM verdict_source v JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.pairing = 'tournament' AND v.sample = 0 AND v.value IS NOT NULL
      AND v.a_idx <> v.b_idx
), edges AS (
    SELECT judge, format, decoding, prompt_idx, lo_idx, hi_idx, min(s) AS s
    FROM calls
    GROUP BY judge, format, decoding, prompt_idx, lo_idx, hi_idx
    HAVING min(s) = max(s) AND min(s) <> 0
), triads AS (
    SELECT e1.judge, e1.format, e1.decoding, e1.prompt_idx, e1.s AS s_xy, e2.s AS s_yz, e3.s AS s_xz
    FROM edges e1
    JOIN edges e2 ON e2.judge = e1.judge AND e2.format = e1.format AND e2.decoding = e1.decoding
         AND e2.prompt_idx = e1.prompt_idx AND e2.lo_idx = e1.hi_idx
    JOIN edges e3 ON e3.judge = e1.judge AND e3.format = e1.format AND e3.decoding = e1.decoding
         AND e3.prompt_idx = e1.prompt_idx AND e3.lo_idx = e1.lo_idx AND e3.hi_idx = e2.hi_idx
)
SELECT judge, format, decoding, prompt_idx::BIGINT AS prompt_idx, count(*)::BIGINT AS n_triads,
       count(*) FILTER (WHERE s_xy = s_yz AND s_xz = -s_xy)::BIGINT AS n_cycles
FROM triads
GROUP BY judge, format, decoding, prompt_idx
ORDER BY judge, format, decoding, prompt_idx
