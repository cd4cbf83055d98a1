-- One row: the format stored under a name (its id and the hash of its definition), if any.
SELECT format_id, spec_hash FROM formats WHERE name = $name
