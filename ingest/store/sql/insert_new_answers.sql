-- Appends the rows of the frame registered as new_rows whose call (the same pool and CALL_KEY) is not
-- stored yet.
INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, swapped, sample, raw,
                      answer, value, status, error, attempts, latency_ms, tokens_in, tokens_out, answer_probs,
                      expected, decoding, endpoint)
SELECT n.cell_run_id, n.pool_id, n.judge_id, n.format_id, n.prompt_idx, n.a_idx, n.b_idx, n.swapped, n.sample,
       n.raw, n.answer, n.value, n.status, n.error, n.attempts, n.latency_ms, n.tokens_in, n.tokens_out,
       n.answer_probs, n.expected, n.decoding, n.endpoint
FROM new_rows n
WHERE NOT EXISTS (SELECT 1 FROM verdicts v
                  WHERE v.pool_id = n.pool_id AND v.judge_id = n.judge_id AND v.format_id = n.format_id
                    AND v.decoding = n.decoding AND v.prompt_idx = n.prompt_idx AND v.a_idx = n.a_idx
                    AND v.b_idx IS NOT DISTINCT FROM n.b_idx AND v.sample = n.sample)
