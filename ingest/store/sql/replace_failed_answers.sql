-- Replaces each stored failed attempt by the new row of the same call (from the frame registered as
-- new_rows; the same pool and CALL_KEY); the attempts add up. A stored answer, parsed or not, is never
-- replaced.
UPDATE verdicts v
SET cell_run_id = n.cell_run_id, swapped = n.swapped, raw = n.raw, answer = n.answer, value = n.value,
    status = n.status, error = n.error, latency_ms = n.latency_ms, tokens_in = n.tokens_in,
    tokens_out = n.tokens_out, answer_probs = n.answer_probs, expected = n.expected, endpoint = n.endpoint,
    attempts = v.attempts + n.attempts, created_at = current_timestamp
FROM new_rows n
WHERE v.pool_id = n.pool_id AND v.judge_id = n.judge_id AND v.format_id = n.format_id
  AND v.decoding = n.decoding AND v.prompt_idx = n.prompt_idx AND v.a_idx = n.a_idx
  AND v.b_idx IS NOT DISTINCT FROM n.b_idx AND v.sample = n.sample
  AND v.status = 'failed'
