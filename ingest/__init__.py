"""Everything that writes: the schema, pool and verdict import, formats, judges and scoring runs.

The database is DuckDB; `store` is the only module that writes to it.
"""

from ._db import db_path, migrate, reader, writer
from ._errors import UserError, where
from ._files import jsonl_objects
from .formats import BUILTIN, Format, load_format_spec
from .store import import_pool, import_verdicts

__all__ = ["BUILTIN", "Format", "UserError", "db_path", "import_pool", "import_verdicts", "jsonl_objects",
           "load_format_spec", "migrate", "reader", "writer", "where"]
