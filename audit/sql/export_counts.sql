-- One row per (sample, status) of the verdict export (export_verdicts.sql's rows: every call of the pool
-- but a jury's votes; status parsed / unparsed / failed): how many rows it holds of each, counted here
-- rather than read out, for the Report page's count.
SELECT v.sample,
       CASE v.status WHEN 'ok' THEN 'parsed' WHEN 'failed' THEN 'failed' ELSE 'unparsed' END AS status,
       count(*) AS n
FROM verdict_source v
JOIN judges j ON j.judge_id = v.judge_id
WHERE v.pool_id = $pool_id
  AND j.provider <> 'jury'      -- a jury's verdicts are its members' votes combined, not calls
GROUP BY ALL
ORDER BY v.sample, status
