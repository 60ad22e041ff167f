from kgservice.notation.errors import NotationError, NotationErrors
from kgservice.notation.parser import doc_name, parse_units, parse_units_with_lines, parse_file
from kgservice.notation.serializer import format_unit, format_units

__all__ = ["NotationError", "NotationErrors", "parse_units", "parse_units_with_lines", "parse_file", "doc_name", "format_unit", "format_units"]
