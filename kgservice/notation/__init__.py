from kgservice.notation.errors import NotationError, NotationErrors
from kgservice.notation.parser import parse_units, parse_file
from kgservice.notation.serializer import format_unit, format_units

__all__ = ["NotationError", "NotationErrors", "parse_units", "parse_file", "format_unit", "format_units"]
