-- One row per judge call the pool's verdict source holds more than once (in two attached rows, or attached and
-- stored), by judge, format and prompt names, at most one: one row per call is the store's rule.
SELECT j.name AS judge, f.name AS format, p.prompt_id, v.n
FROM (SELECT judge_id, format_id, prompt_idx, count(*) AS n FROM verdict_source WHERE pool_id = $pool_id
      GROUP BY judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, sample HAVING count(*) > 1 LIMIT 1) v
JOIN judges j USING (judge_id) JOIN formats f USING (format_id)
JOIN prompts p ON p.pool_id = $pool_id AND p.prompt_idx = v.prompt_idx
