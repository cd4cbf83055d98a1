-- One row: the largest calibration_id in calibrations (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(calibration_id), 0) AS largest FROM calibrations
