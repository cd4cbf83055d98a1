-- Records when a run was first asked to stop (a second request keeps the first time).
UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, $now)
WHERE run_id = $run_id
