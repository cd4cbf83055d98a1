-- One row per stored sample of a judge call of one (judge, format, decoding) cell of the pool: the
-- call's unit (the call without its sample index: prompt, slot A, slot B, numbered 0.. in that
-- order), the sample index, the parsed value (NaN unless parsed), and Σ p² / (Σ p)² of the
-- sample's answer distribution (the chance that two independent draws from it agree; NaN without
-- one).
WITH rows AS (
    SELECT prompt_idx, a_idx, coalesce(b_idx, -1) AS b_idx, sample, value,
           map_values(json_transform(answer_probs, '"MAP(VARCHAR, DOUBLE)"')) AS probs
    FROM verdict_source
    WHERE pool_id = $pool_id AND judge_id = $judge_id AND format_id = $format_id AND decoding = $decoding
)
SELECT dense_rank() OVER (ORDER BY prompt_idx, a_idx, b_idx) - 1 AS unit, sample,
       coalesce(value, 'NaN'::DOUBLE) AS value,
       coalesce(list_inner_product(probs, probs) / pow(list_sum(probs), 2), 'NaN'::DOUBLE) AS purity
FROM rows
ORDER BY unit, sample
