-- One row per parsed comparative call between two different candidates of the pool: the cell
-- (judge, format, decoding), the prompt, the candidates in slot A and slot B, and the margin in
-- favour of slot A (> 0 A is better, < 0 B, 0 a tie).
SELECT j.name AS judge, f.name AS format, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.value
FROM verdict_source v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
  AND v.value IS NOT NULL
ORDER BY j.name, f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample
