-- Records the parse of each distinct (format, raw) of a pool's attached files, from the frame registered as parsed_raws.
INSERT INTO attached_parses (pool_id, format_id, raw, label, value, status)
SELECT $pool_id, format_id, raw, label, value, status FROM parsed_raws
