-- Stores a format's definition under its name (pairing is null for a pointwise format).
INSERT INTO formats (format_id, name, kind, pairing, spec, value_lo, value_hi, template, spec_hash)
VALUES ($format_id, $name, $kind, $pairing, $spec, $value_lo, $value_hi, $template, $spec_hash)
