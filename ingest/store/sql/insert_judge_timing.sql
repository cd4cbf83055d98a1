-- One format and decoding of one run: the calls it made, their characters and seconds, the judge's load
-- time and the machine's load per core at the run's start.
INSERT INTO judge_timings (run_id, host, provider, model, format, decoding, calls, chars, call_s, load_s,
                           load_per_core)
VALUES ($run_id, $host, $provider, $model, $format, $decoding, $calls, $chars, $call_s, $load_s, $load_per_core)
