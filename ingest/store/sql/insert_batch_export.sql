-- Records one batch export: its pool, judge identity and decoding settings, folder, call count and files.
INSERT INTO batch_exports (export_id, pool_id, judge_id, identity, decoding_settings, folder, n_calls, files)
VALUES ($export_id, $pool_id, $judge_id, $identity, $decoding_settings, $folder, $n_calls, $files)
