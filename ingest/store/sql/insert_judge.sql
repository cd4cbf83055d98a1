-- Stores a judge under its name with its identity (DESIGN.md 'Judge identity'); settings hold no secrets.
INSERT INTO judges (judge_id, name, provider, model, endpoint, settings, identity)
VALUES ($judge_id, $name, $provider, $model, $endpoint, $settings, $identity)
