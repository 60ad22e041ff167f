"""Administration: ``kg doctor`` (graph <-> vector consistency, reverse indexes, repair) and
``kg dump`` / ``kg restore`` (units, the ground truth, to and from a portable file)."""

from kgservice.admin.backup import DumpError, dump, read_dump, restore
from kgservice.admin.doctor import DoctorReport, Finding, check, expected_rows, repair

__all__ = ["DoctorReport", "DumpError", "Finding", "check", "dump", "expected_rows", "read_dump", "repair", "restore"]
