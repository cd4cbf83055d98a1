-- Records a calibration before it runs: its pool, acceptance threshold, target width and labels.
INSERT INTO calibrations (calibration_id, pool_id, threshold, target_width, labels)
VALUES ($calibration_id, $pool_id, $threshold, $target_width, $labels)
