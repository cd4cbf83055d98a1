"""The audit's door to the database: a reading of the store's handle (ingest.store.database) whose
named queries are this package's `sql/NAME.sql`, and the error a reader says to the user. The audit
holds no connection and writes no SQL text: it names a query and binds its parameters."""

from __future__ import annotations

import os

from ingest.store.database import Database, UserError


class AuditError(UserError):
    """A request the audit cannot answer (no database, no such pool); shown to the user as is."""


def reading(db: Database | str | os.PathLike | None):
    """A read-only session on the database (its handle, or a path the handle is made from) whose
    reads run audit/sql/NAME.sql; scoped to the judges the handle is scoped to, if any."""
    return Database.of(db).reading(queries="audit", error=AuditError)
