-- Records the process a launch started for a run, unless the run's own process recorded itself first.
UPDATE runs SET pid = coalesce(pid, $pid), pid_start = coalesce(pid_start, $pid_start)
WHERE run_id = $run_id
