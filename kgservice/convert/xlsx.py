"""XLSX -> text with openpyxl (read-only, the values last calculated): one page per sheet, a
``# Sheet: name`` heading, then each non-empty row as ``a | b | c``."""

from __future__ import annotations

import io
import zipfile

from kgservice.convert.formats import UnreadableDocument
from kgservice.convert.docx import table_rows
from kgservice.convert.layout import assemble, heading

MAX_ROWS = 20_000  # per sheet: a data dump is not prose; its first rows say what it holds


def _cell(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def xlsx_text(data: bytes, name: str) -> tuple[str, list[int]]:
    from openpyxl import load_workbook

    try:
        wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise UnreadableDocument(f"{name}: the Excel workbook is damaged and cannot be read ({exc}); open it in "
                                 "Excel or LibreOffice and save it as .xlsx again") from None
    pages: list[list[str]] = []
    try:
        for ws in wb.worksheets:
            rows = []
            for i, row in enumerate(ws.iter_rows(values_only=True)):
                if i >= MAX_ROWS:
                    break
                rows.append([_cell(v) for v in row])
            while rows and not any(rows[-1]):
                rows.pop()
            table = table_rows(rows)
            pages.append([heading(f"Sheet: {ws.title}", 1)] + ([table] if table else []))
    finally:
        wb.close()
    return assemble(pages)
