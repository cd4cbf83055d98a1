-- Deletes every stored label of a pool, of pairs and of candidates (`import-labels --replace` starts over).
DELETE FROM pair_labels WHERE pool_id = $pool_id;
DELETE FROM accept_labels WHERE pool_id = $pool_id;
