-- One row per judging (judge, format) the pool's attached files hold, by name.
SELECT DISTINCT judge, format FROM attached_raw WHERE pool_id = $pool_id ORDER BY judge, format
