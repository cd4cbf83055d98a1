-- One row for the pool: how many of its prompts and candidate responses are placeholders (a one-line
-- bracketed notice such as "[answer text not distributed with ...]" standing where the text would be),
-- out of how many, the shortest and longest placeholder response in characters, and one as an example.
-- A placeholder: a one-line bracketed notice that the text is not there (not distributed, not included,
-- withheld, redacted, placeholder), matched case-insensitively.
-- (The pattern is written out in both places: a constant is compiled once, a subquery's value per row.)
WITH c AS (
    SELECT c.response,
           regexp_matches(c.response, '^\s*\[[^\]\n]*(not distributed|not included|withheld|redacted|placeholder)[^\]\n]*\]\s*$', 'i') AS placeholder
    FROM candidates c WHERE c.pool_id = $pool_id
), p AS (
    SELECT regexp_matches(p.prompt, '^\s*\[[^\]\n]*(not distributed|not included|withheld|redacted|placeholder)[^\]\n]*\]\s*$', 'i') AS placeholder
    FROM prompts p WHERE p.pool_id = $pool_id
)
SELECT (SELECT count(*) FROM p)::BIGINT AS n_prompts,
       (SELECT count(*) FILTER (WHERE placeholder) FROM p)::BIGINT AS placeholder_prompts,
       (SELECT count(*) FROM c)::BIGINT AS n_responses,
       (SELECT count(*) FILTER (WHERE placeholder) FROM c)::BIGINT AS placeholder_responses,
       (SELECT min(length(response)) FILTER (WHERE placeholder) FROM c)::BIGINT AS min_chars,
       (SELECT max(length(response)) FILTER (WHERE placeholder) FROM c)::BIGINT AS max_chars,
       (SELECT any_value(response) FILTER (WHERE placeholder) FROM c) AS example
