"""Scoring formats: the five built-ins with the paper's prompts, and user formats from TOML."""

from ._demonstrations import DEMONSTRATIONS_END, base_instructions, instructed, shown_demonstrations
from ._format import BUILTIN, Format, format_from_row, format_from_spec, load_format_spec, stored_formats
from ._parsers import Parsed, parse_answer, parse_range

__all__ = ["BUILTIN", "DEMONSTRATIONS_END", "Format", "Parsed", "base_instructions", "format_from_row",
           "format_from_spec", "instructed", "load_format_spec", "parse_answer", "parse_range", "shown_demonstrations",
           "stored_formats"]
