-- Stores a judge under its name with its identity (docs/glossary.md#who-judges); settings hold no secrets.
INSERT INTO judges (judge_id, name, provider, model, endpoint, settings, identity)
VALUES ($judge_id, $name, $provider, $model, $endpoint, $settings, $identity)
