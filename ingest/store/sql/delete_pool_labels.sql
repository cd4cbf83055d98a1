-- Deletes every stored label of a pool (`import-labels --replace` starts over).
DELETE FROM labels WHERE pool_id = $pool_id
