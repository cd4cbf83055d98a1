-- export_counts.sql's rows per judging: one row per (judge, format, sample, status) of the verdict
-- export, so the derived result is stored in parts, one per judging, and summed when read.
SELECT j.name AS judge, f.name AS format, v.sample,
       CASE v.status WHEN 'ok' THEN 'parsed' WHEN 'failed' THEN 'failed' ELSE 'unparsed' END AS status,
       count(*) AS n
FROM verdict_source v
JOIN judges j ON j.judge_id = v.judge_id
JOIN formats f ON f.format_id = v.format_id
WHERE v.pool_id = $pool_id
  AND j.provider <> 'jury'      -- a jury's verdicts are its members' votes combined, not calls
GROUP BY ALL
ORDER BY judge, format, v.sample, status
