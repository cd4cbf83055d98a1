-- Saves a calibration's result document with its record.
UPDATE calibrations SET result = $result, finished_at = current_timestamp WHERE calibration_id = $calibration_id
