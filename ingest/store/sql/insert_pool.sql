-- Records a pool under its name, with the file it came from, that file's hash and its layout.
INSERT INTO pools (pool_id, name, source_file, source_sha256, layout)
VALUES ($pool_id, $name, $source_file, $source_sha256, $layout)
