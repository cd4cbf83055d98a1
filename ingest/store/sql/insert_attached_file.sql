-- Records one attached file of a pool as it is now (size, modification time, row count, hive judge and format).
INSERT INTO attached_files (pool_id, path, size, mtime_ns, n_rows, judge, format)
VALUES ($pool_id, $path, $size, $mtime_ns, $n_rows, $judge, $format)
