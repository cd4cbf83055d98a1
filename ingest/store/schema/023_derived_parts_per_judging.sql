-- Version 23: derived results in parts, one per judging. A result computed cell by cell is stored as
-- one part per judging (a judge with a format: the cells of its verdicts), each under the fingerprint
-- of that judging's cell runs, verdicts and attached files alone: a judge scored in a new format
-- computes that judging's part, not the judge's other formats'. `part` is now the judging as a JSON
-- list, `["judge", "format"]`, or '' for a result stored whole. The parts stored per judge (version
-- 19's) can never be read again, so they go; every whole result stays.
DELETE FROM derived_results WHERE part <> '' AND NOT starts_with(part, '[');
