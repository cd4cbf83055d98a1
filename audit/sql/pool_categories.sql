-- How many of the pool's prompts name a category, and how many categories they name (`estimate
-- --strata category` needs at least one).
SELECT count(category)::BIGINT AS n_with, count(DISTINCT category)::BIGINT AS n_categories,
       count(*)::BIGINT AS n_prompts
FROM prompts WHERE pool_id = $pool_id
