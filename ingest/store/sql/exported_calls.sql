-- One row per stored call among the custom_ids registered as wanted_ids: the call, its export's judge
-- identity and decoding settings, the judge's identity now, and the names of the judge and the pool.
SELECT c.*, e.identity AS export_identity, e.decoding_settings AS export_decoding_settings,
       j.identity AS judge_identity, j.name AS judge, p.name AS pool
FROM batch_calls c JOIN wanted_ids USING (custom_id)
JOIN batch_exports e USING (export_id) JOIN judges j ON j.judge_id = c.judge_id
JOIN pools p ON p.pool_id = c.pool_id
ORDER BY c.custom_id
