-- One row per distinct (judge, format, raw answer) of the pool's attached files: what its format's parser reads once.
SELECT DISTINCT judge, format, raw FROM attached_raw WHERE pool_id = $pool_id AND raw IS NOT NULL
