-- One row per background run of pool $pool other than scoring (curation and training runs, which
-- curate inside them, evaluations, probes), oldest first: what it was asked (config), how it ended.
SELECT run_id, kind, status, created_at, finished_at, config, error
FROM runs
WHERE pool = $pool AND kind <> 'score'
ORDER BY run_id
