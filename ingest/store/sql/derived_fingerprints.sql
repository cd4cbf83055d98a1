-- One row per stored part of a pool's derived result of this name and these parameters ('' for a whole one):
-- the fingerprint it was computed under (whether it is current), without its frame.
SELECT part, fingerprint
FROM derived_results
WHERE pool_id = $pool_id AND name = $name AND params_json = $params_json
