-- One row: how many verdict rows a pool holds (what `import-pool --replace` drops with it).
SELECT count(*) FROM verdicts WHERE pool_id = $pool_id
