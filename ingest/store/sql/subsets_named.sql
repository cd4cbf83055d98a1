-- One row per subset of a pool stored under a name: its id (saving a subset replaces them).
SELECT subset_id FROM subsets WHERE pool_id = $pool_id AND name = $name
