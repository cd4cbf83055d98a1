"""Names typed in the browser never become paths outside the app's data folder.

Two helpers, for every page field that names a file or folder (pool names, export names, run and
adapter folders, subset files):

    safe_name(text, field)       -> the name, stripped; refuses anything that is not one plain
                                    file name: empty, '.', '..', a leading dot, '/', '\\', an
                                    absolute path, a drive ('C:'), control characters, > 120 chars.
                                    Use it on what a user TYPED; show the UserError to them.
    inside(base, *parts, field)  -> base/parts resolved, refused unless it stays inside `base`
                                    (symlinks resolved too). Use it when joining a checked name
                                    onto a folder the server chose (data_dir(db), a run folder).
    file_stem(text)              -> a name built by the app from stored text (e.g. a pool name
                                    imported from the command line) made safe for a download or
                                    a file: unsafe characters become '_'. Never refuses.
    data_dir(db)                 -> the app's data folder: the folder that holds the database.

Example (a page that saves a subset under a typed name):

    from ingest import data_dir, inside, safe_name
    name = safe_name(st.text_input("Subset name"), "subset name")     # UserError -> st.error
    out = inside(data_dir(db) / "subsets", name + ".jsonl", field="subset name")
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._errors import UserError

MAX_NAME = 120
_ALLOWED = re.compile(r"[\w][\w.\- ]*")          # letters (any script), digits, _ . - and spaces
_UNSAFE = re.compile(r"[^\w.\-]+")


def safe_name(text: str | None, field: str = "name") -> str:
    """`text` stripped, if it is one plain file name; otherwise a UserError naming the field."""
    name = (text or "").strip()
    if not name:
        raise UserError(f"{field}: empty; give a name")
    if "/" in name or "\\" in name or os.sep in name or (os.altsep and os.altsep in name):
        raise UserError(f"{field} {name!r}: a name, not a path (no slash or backslash)")   # words: Markdown eats a '\\'
    if name in (".", "..") or name.startswith("."):
        raise UserError(f"{field} {name!r}: may not start with '.' (no hidden files, no '..')")
    if re.match(r"^[A-Za-z]:", name):
        raise UserError(f"{field} {name!r}: a name, not a drive or path")
    if len(name) > MAX_NAME:
        raise UserError(f"{field}: longer than {MAX_NAME} characters")
    if not _ALLOWED.fullmatch(name):
        raise UserError(f"{field} {name!r}: use letters, digits, '_', '-', '.' and spaces only")
    return name


def inside(base: str | os.PathLike, *parts: str, field: str = "path") -> Path:
    """base/parts, resolved; a UserError unless the result lies inside base (or is base)."""
    root = Path(base).resolve()
    for part in parts:
        if Path(part).is_absolute() or Path(part).drive:
            raise UserError(f"{field} {part!r}: an absolute path is not allowed")
    target = root.joinpath(*parts).resolve()
    if target != root and not target.is_relative_to(root):
        raise UserError(f"{field} {os.path.join(*parts)!r}: leaves the data folder")
    return target


def file_stem(text: str) -> str:
    """A file-name-safe version of app-built text: runs of unsafe characters become '_'."""
    stem = _UNSAFE.sub("_", str(text)).strip("._") or "unnamed"
    return stem[:MAX_NAME]


def data_dir(db: str | os.PathLike) -> Path:
    """The app's data folder: the one that holds the database file."""
    return Path(db).resolve().parent
