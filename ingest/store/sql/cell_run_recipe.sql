-- One row: how a cell run's calls were made: its template, decoding settings (JSON), schedule and seed.
SELECT template, decoding_settings, schedule, seed FROM cell_runs WHERE cell_run_id = $cell_run_id
