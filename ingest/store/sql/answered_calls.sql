-- One row per call of a pool holding an answer (a failed attempt is not one), from any judge or, when
-- judge_id is given, from that judge, stored or in the pool's attached files (verdict_source, made on the
-- connection first): the call's key (CALL_KEY).
SELECT judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, sample FROM verdict_source
WHERE pool_id = $pool_id AND status <> 'failed' AND ($judge_id IS NULL OR judge_id = $judge_id)
