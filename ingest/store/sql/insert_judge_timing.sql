-- One format and decoding of one run: the calls it made, their characters and seconds, and the judge's
-- load time.
INSERT INTO judge_timings (run_id, host, provider, model, format, decoding, calls, chars, call_s, load_s)
VALUES ($run_id, $host, $provider, $model, $format, $decoding, $calls, $chars, $call_s, $load_s)
