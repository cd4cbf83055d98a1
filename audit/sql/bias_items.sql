-- One row per comparative item seen with a parsed verdict in both orders: a (judge, format,
-- decoding, prompt, x, y) where x is the anchored candidate (y its anchor) or the earlier-listed of the two.
-- v_fwd = mean margin for slot A with x in slot A; v_rev = mean margin for slot A with x in slot B;
-- ref_gap = reference of x minus reference of y (null when either is missing).
-- An item needs a parsed call in the reverse order. Where a judging's (judge, format) reverse calls are few
-- (fewer than a fifth of its parsed two-candidate calls: a run that asked a sample of them swapped), they are
-- grouped by item first and only the forward calls of those items are read then (a semi join on the item):
-- a filtered scan, not a grouping of every call. Where they are many (a run asked in both orders), every
-- parsed call of its cells with a reverse call is grouped by item at once, as a semi join on that many items
-- costs twice as much (tests/bench/bench_bias_items.py). Each part is skipped when no judging takes it
-- (a join on none). Read from verdict_values (no answer text: an attached call is its row of attached_ids,
-- its file not read).
WITH judgings AS (   -- per judging: its parsed two-candidate calls, and how many of them are reverse
    SELECT v.judge_id, v.format_id, count(*) FILTER (WHERE v.swapped) AS n_reverse, count(*) AS n
    FROM verdict_values v
    WHERE v.pool_id = $pool_id AND v.value IS NOT NULL AND v.b_idx IS NOT NULL
    GROUP BY v.judge_id, v.format_id
),
sparse AS (SELECT judge_id, format_id FROM judgings WHERE n_reverse > 0 AND n_reverse * 5 < n),
-- the judgings with few reverse calls: those grouped by item, then the forward calls of those items alone
reverse AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.prompt_idx, v.b_idx AS x, v.a_idx AS y,
           avg(v.value) AS v_rev
    FROM verdict_values v
    SEMI JOIN sparse s ON s.judge_id = v.judge_id AND s.format_id = v.format_id
    WHERE v.pool_id = $pool_id AND v.swapped AND v.value IS NOT NULL AND v.a_idx <> v.b_idx
      AND v.format_id IN (SELECT format_id FROM formats WHERE kind = 'comparative')
    GROUP BY v.judge_id, v.format_id, v.decoding, v.prompt_idx, v.b_idx, v.a_idx
),
forward AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.prompt_idx, v.a_idx AS x, v.b_idx AS y,
           avg(v.value) AS v_fwd
    FROM verdict_values v
    SEMI JOIN reverse r ON r.judge_id = v.judge_id AND r.format_id = v.format_id AND r.decoding = v.decoding
                       AND r.prompt_idx = v.prompt_idx AND r.x = v.a_idx AND r.y = v.b_idx
    WHERE v.pool_id = $pool_id AND NOT v.swapped AND v.value IS NOT NULL
    GROUP BY v.judge_id, v.format_id, v.decoding, v.prompt_idx, v.a_idx, v.b_idx
),
-- the judgings with many: every parsed call of their cells with a reverse call, grouped by item. The cells are
-- a DISTINCT of the reverse calls, as before: from the judgings' counts, DuckDB's estimate of the items fell
-- below the candidates' and it hashed the items for the joins below (measured: 6.75M of them, twice as slow)
cells AS (
    SELECT DISTINCT v.judge_id, v.format_id, v.decoding
    FROM verdict_values v
    ANTI JOIN sparse s ON s.judge_id = v.judge_id AND s.format_id = v.format_id
    WHERE v.pool_id = $pool_id AND v.swapped AND v.value IS NOT NULL
),
calls AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.prompt_idx,
           CASE WHEN v.swapped THEN v.b_idx ELSE v.a_idx END AS x,
           CASE WHEN v.swapped THEN v.a_idx ELSE v.b_idx END AS y,
           v.swapped, v.value
    FROM verdict_values v
    JOIN cells USING (judge_id, format_id, decoding)
    JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
      AND v.value IS NOT NULL
),
grouped AS (
    SELECT judge_id, format_id, decoding, prompt_idx, x, y,
           avg(value) FILTER (WHERE NOT swapped) AS v_fwd,
           avg(value) FILTER (WHERE swapped) AS v_rev
    FROM calls
    GROUP BY judge_id, format_id, decoding, prompt_idx, x, y
),
items AS (
    SELECT i.judge_id, i.format_id, i.decoding, i.prompt_idx, i.x, i.y, i.v_fwd, r.v_rev
    FROM forward i JOIN reverse r USING (judge_id, format_id, decoding, prompt_idx, x, y)
    UNION ALL
    SELECT judge_id, format_id, decoding, prompt_idx, x, y, v_fwd, v_rev
    FROM grouped WHERE v_fwd IS NOT NULL AND v_rev IS NOT NULL
)
SELECT j.name AS judge, f.name AS format, i.decoding, i.prompt_idx, i.x, i.y, i.v_fwd, i.v_rev,
       cx.reference - cy.reference AS ref_gap
FROM items i
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
JOIN candidates cx ON cx.pool_id = $pool_id AND cx.cand_idx = i.x
JOIN candidates cy ON cy.pool_id = $pool_id AND cy.cand_idx = i.y
ORDER BY j.name, f.name, i.decoding, i.prompt_idx, i.x, i.y
