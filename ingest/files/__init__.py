"""Reading and validating input files: pools, verdicts made elsewhere, human labels.

Every reader checks the whole file before anything is stored and names the file, line and field at
fault (a UserError); nothing here touches the database.
"""

from ._label_file import FLIP, LABELS, SOURCES, read_labels
from ._label_file import ACCEPT, DEFAULT_ANNOTATOR
from ._pool_file import PoolData, pool_shape, read_pool
from ._tables import (EXTENSIONS, Table, check_limits, check_path, file_sha256, first_repeat, first_row,
                      jsonl_objects, limits, read_table, text_column)
from ._verdict_file import REQUIRED as VERDICT_REQUIRED, TEXT as VERDICT_TEXT, read_verdicts, verdict_batches
from ._streams import batch_rows, table_batches
from ._pool_stream import PoolStream

__all__ = ["ACCEPT", "DEFAULT_ANNOTATOR", "EXTENSIONS", "FLIP", "LABELS", "PoolData", "SOURCES", "Table", "check_limits", "check_path",
           "file_sha256", "first_repeat", "first_row", "jsonl_objects", "limits", "pool_shape", "read_labels",
           "read_pool", "read_table", "read_verdicts", "text_column",
           "verdict_batches", "VERDICT_REQUIRED", "VERDICT_TEXT", "batch_rows", "table_batches", "PoolStream"]
