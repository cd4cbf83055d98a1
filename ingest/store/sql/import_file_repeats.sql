-- How many calls of the file of import_file_rows.sql more than one row holds, by one hash per call (a call
-- repeats, or two hashes meet: the importer then reads the file the batch way, which names the rows). A
-- GROUP BY, which runs on every thread where a count of distinct values does not.
SELECT count(*) FROM (
    SELECT 1 FROM import_rows r LEFT JOIN import_formats f ON f.format = r.format
    GROUP BY hash(r.judge, r.format, coalesce(r.decoding, 'greedy'), r.prompt_id,
                  CASE WHEN f.kind = 'pointwise' THEN r.candidate_id ELSE r.a_id END, r.b_id, coalesce(r.sample, 0))
    HAVING count(*) > 1)
