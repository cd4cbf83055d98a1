-- Deletes a subset: its members, then its record.
DELETE FROM subset_members WHERE subset_id = $subset_id;
DELETE FROM subsets WHERE subset_id = $subset_id;
