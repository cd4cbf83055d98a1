-- Records a downstream-evaluation study: its name, pool and held-out rule.
INSERT INTO studies (study_id, name, pool_id, heldout) VALUES ($study_id, $name, $pool_id, $heldout)
