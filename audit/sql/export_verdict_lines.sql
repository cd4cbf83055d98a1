-- One row per row of export_verdicts.sql, the same rows in the same order: the row as one JSON object in
-- `line`, label_probs nested as an object rather than as text (`export-verdicts` to JSONL).
SELECT to_json(e) AS line
FROM (
    SELECT j.name AS judge,
           f.name AS format,
           v.decoding,
           p.prompt_id,
           ca.candidate_id AS candidate_a,
           cb.candidate_id AS candidate_b,
           v.sample,
           v.raw,
           v.answer AS label,
           CASE WHEN v.status = 'ok' THEN v.value END AS value,
           CASE v.status WHEN 'ok' THEN 'parsed' WHEN 'failed' THEN 'failed' ELSE 'unparsed' END AS status,
           v.error,
           CAST(v.answer_probs AS JSON) AS label_probs,
           v.tokens_in,
           v.tokens_out,
           v.latency_ms,
           CASE WHEN r.source = 'score' THEN coalesce(v.endpoint, j.endpoint) ELSE v.endpoint END AS endpoint
    FROM verdict_source v
    JOIN judges j ON j.judge_id = v.judge_id
    JOIN formats f ON f.format_id = v.format_id
    LEFT JOIN cell_runs r ON r.cell_run_id = v.cell_run_id
    JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx
    JOIN candidates ca ON ca.pool_id = v.pool_id AND ca.cand_idx = v.a_idx
    LEFT JOIN candidates cb ON cb.pool_id = v.pool_id AND cb.cand_idx = v.b_idx
    WHERE v.pool_id = $pool_id
      AND j.provider <> 'jury'      -- a jury's verdicts are its members' votes combined, not calls
    ORDER BY j.name, f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx NULLS FIRST, v.sample
) AS e
