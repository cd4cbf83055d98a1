-- One row per stored sample of a comparative call between two different candidates, in the cells
-- (judge, format, decoding) of the pool whose calls carry answer distributions or were asked more
-- than once: the call (prompt, slot A, slot B), the sample index, the margin in favour of slot A
-- (null unless parsed), and the sample's answer distribution as two lists, each answer's margin
-- (from the format's answer -> value map) and its probability (both null without a distribution).
WITH cells AS (
    SELECT judge_id, format_id, decoding
    FROM verdict_source
    WHERE pool_id = $pool_id
    GROUP BY judge_id, format_id, decoding
    HAVING max(sample) > 0 OR count(answer_probs) > 0
), rows AS (
    SELECT j.name AS judge, f.name AS format, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample, v.value,
           json_transform(v.answer_probs, '"MAP(VARCHAR, DOUBLE)"') AS probs,
           json_transform(json_extract(f.spec, '$.labels'), '"MAP(VARCHAR, DOUBLE)"') AS margins
    FROM verdict_source v
    JOIN cells USING (judge_id, format_id, decoding)
    JOIN judges j USING (judge_id)
    JOIN formats f USING (format_id)
    WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
)
SELECT judge, format, decoding, prompt_idx, a_idx, b_idx, sample, value,
       list_transform(map_keys(probs), lambda k: margins[k]) AS dist_values,
       map_values(probs) AS dist_probs
FROM rows
ORDER BY judge, format, decoding, prompt_idx, a_idx, b_idx, sample
