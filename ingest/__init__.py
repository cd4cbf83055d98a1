"""Everything that writes or calls out, in four rooms:

- `ingest.store`: the database: connection, migrations (`store/schema/`) and every write;
- `ingest.runs`: background runs: the runs table, processes, heartbeat, queue and cancel;
- `ingest.scoring`: scoring runs: the runner, the call plan, judges, formats and probes;
- `ingest.files`: reading and validating pool, verdict and label files.

This package itself stays light (importing it loads no formats, judges or torch): it exports the
error type a user sees and the helpers that keep typed names and secrets safe.
"""

from ._errors import UserError, where
from ._paths import data_dir, file_stem, inside, safe_name
from ._redact import redact
from .store.database import Database

__all__ = ["Database", "UserError", "data_dir", "file_stem", "inside", "redact", "safe_name", "where"]
