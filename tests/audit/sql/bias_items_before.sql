-- bias_items.sql before it read only the calls that can make an item (kept as the reference its rows
-- must equal, tests/audit/test_bias.py): it grouped every parsed comparative call of the cells with a
-- swapped parsed call by item, then kept the items seen in both orders.
-- One row per comparative item seen with a parsed verdict in both orders: a (judge, format,
-- decoding, prompt, x, y) where x is the anchored candidate (y its anchor) or the earlier-listed of the two.
-- v_fwd = mean margin for slot A with x in slot A; v_rev = mean margin for slot A with x in slot B;
-- ref_gap = reference of x minus reference of y (null when either is missing).
WITH cells AS (   -- only cells with a parsed call in the reverse order can have an item: skip the others
    SELECT DISTINCT judge_id, format_id, decoding
    FROM verdict_source
    WHERE pool_id = $pool_id AND swapped AND value IS NOT NULL
),
calls AS (
    SELECT v.judge_id, v.format_id, v.decoding, v.prompt_idx,
           CASE WHEN v.swapped THEN v.b_idx ELSE v.a_idx END AS x,
           CASE WHEN v.swapped THEN v.a_idx ELSE v.b_idx END AS y,
           v.swapped, v.value
    FROM verdict_source v
    JOIN cells USING (judge_id, format_id, decoding)
    JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
      AND v.value IS NOT NULL
),
items AS (
    SELECT judge_id, format_id, decoding, prompt_idx, x, y,
           avg(value) FILTER (WHERE NOT swapped) AS v_fwd,
           avg(value) FILTER (WHERE swapped) AS v_rev
    FROM calls
    GROUP BY judge_id, format_id, decoding, prompt_idx, x, y
)
SELECT j.name AS judge, f.name AS format, i.decoding, i.prompt_idx, i.x, i.y, i.v_fwd, i.v_rev,
       cx.reference - cy.reference AS ref_gap
FROM items i
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
JOIN candidates cx ON cx.pool_id = $pool_id AND cx.cand_idx = i.x
JOIN candidates cy ON cy.pool_id = $pool_id AND cy.cand_idx = i.y
WHERE i.v_fwd IS NOT NULL AND i.v_rev IS NOT NULL
ORDER BY j.name, f.name, i.decoding, i.prompt_idx, i.x, i.y
