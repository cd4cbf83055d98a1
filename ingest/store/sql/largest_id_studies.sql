-- One row: the largest study_id in studies (0 when it holds none), for the store's next fresh id (_database.next_id).
SELECT coalesce(max(study_id), 0) AS largest FROM studies
