-- One row per stored judge call of the pool (`judgeaudit export-verdicts`,
-- docs/files.md#export-verdicts): the candidates by their ids (candidate_b null for pointwise calls),
-- the verbatim raw output, the answer the parser read (a number out of range too), the value (on the
-- format's own scale, for comparative formats the margin in favour of slot A; null unless parsed), the
-- status as parsed / unparsed / failed (every parse status other than 'ok' is unparsed), the answer
-- distribution as JSON text, and the endpoint that answered: for a call an online run stored before
-- version 9, the judge's stored endpoint (then its only one); null for an answer a batch runner gave
-- (import-batch) or an imported verdict file left without one. The answer and its distribution keep a
-- verdict file's names, `label` and `label_probs` (docs/files.md#verdict-file).
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
       CAST(v.answer_probs AS VARCHAR) AS label_probs,
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
