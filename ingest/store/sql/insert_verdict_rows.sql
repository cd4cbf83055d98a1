-- Appends the verdict rows of the frame registered as verdict_rows (its caller has left out every call
-- already stored: one row per call).
INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, swapped, sample, raw,
                      answer, value, status, error, attempts, latency_ms, tokens_in, tokens_out, answer_probs,
                      expected, decoding, endpoint)
SELECT cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, swapped, sample, raw, answer, value,
       status, error, attempts, latency_ms, tokens_in, tokens_out, answer_probs, expected, decoding, endpoint
FROM verdict_rows
