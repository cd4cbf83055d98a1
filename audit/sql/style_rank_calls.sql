-- One row per parsed comparative call of the pool, as integers (audit._style_cells.style_groups groups
-- them): `key` = (the call's cell x 3 + its outcome: 0 slot B preferred, 1 a tie, 2 slot A) x $n_prompts
-- + its prompt_idx when $by_prompt (else the cell x 3 + the outcome alone), the cell numbered (judge_id x
-- $n_formats + format_id) x len($decodings) + the decoding's position in $decodings (style_decodings'
-- list) - 1; and the candidates in slot A and slot B. Unordered.
SELECT ((((v.judge_id * $n_formats + v.format_id) * len($decodings) + list_position($decodings, v.decoding) - 1) * 3
         + sign(v.value) + 1)::BIGINT * (CASE WHEN $by_prompt THEN $n_prompts ELSE 1 END)
        + (CASE WHEN $by_prompt THEN v.prompt_idx ELSE 0 END))::BIGINT AS key,
       v.a_idx::INTEGER AS a_idx, v.b_idx::INTEGER AS b_idx
FROM verdict_source v
SEMI JOIN formats f ON f.format_id = v.format_id AND f.kind = 'comparative'
WHERE v.pool_id = $pool_id AND v.value IS NOT NULL
