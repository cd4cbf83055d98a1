-- Records how one (judge, format) cell's verdicts are being made: a cell run, 'running' until finished.
INSERT INTO cell_runs (cell_run_id, pool_id, judge_id, format_id, source, source_file, template, template_hash,
                       decoding_settings, judge_model, schedule, seed, notes, status, run_id)
VALUES ($cell_run_id, $pool_id, $judge_id, $format_id, $source, $source_file, $template, $template_hash,
        $decoding_settings, $judge_model, $schedule, $seed, $notes, 'running', $run_id)
