-- One row per call key (the frame registered as call_keys) whose call is stored: its _pos and the stored
-- row's status. The same call: the same pool and CALL_KEY (judge, format, decoding, prompt, slots, sample).
SELECT n._pos, v.status
FROM call_keys n
JOIN verdicts v ON v.pool_id = n.pool_id AND v.judge_id = n.judge_id AND v.format_id = n.format_id
               AND v.decoding = n.decoding AND v.prompt_idx = n.prompt_idx AND v.a_idx = n.a_idx
               AND v.b_idx IS NOT DISTINCT FROM n.b_idx AND v.sample = n.sample
