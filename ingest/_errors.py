"""The one exception type a user sees: a message that names the file, line and field at fault."""


class UserError(Exception):
    """Bad input or a refused request. The CLI prints the message, never a traceback."""


def where(file: str, line: int | None = None, field: str | None = None) -> str:
    """Format a location as 'FILE, line N, field F' (parts that are None are left out)."""
    parts = [str(file)]
    if line is not None:
        parts.append(f"line {line}")
    if field is not None:
        parts.append(f"field '{field}'")
    return ", ".join(parts)
