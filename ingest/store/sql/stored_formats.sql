-- One row per stored format: its id, name, definition (spec JSON) and prompt template.
SELECT format_id, name, spec, template FROM formats ORDER BY format_id
