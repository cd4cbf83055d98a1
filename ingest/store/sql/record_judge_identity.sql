-- Records the identity of a judge stored before identities were (its provider, model and endpoint
-- matched the run that uses it now).
UPDATE judges SET identity = $identity WHERE judge_id = $judge_id
