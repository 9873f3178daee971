"""Scan a checkpoint on its data: every check that applies, one report of what is wrong with the model, its
head, its label mapping and its labels (`scan_rows`, `scan_table`; the registry in `base.CHECKS`).

Checks register in this order, which is the order they run in: the head first (no data needed), then the mapping,
which sets how every later check reads the data's labels.
"""
from explorer.scan import head, mapping, labels, shortcut, robustness, calibration, duplicates, slices  # noqa: F401  (registers, in order)
from explorer.scan.base import CHECKS, Finding
from explorer.scan.report import ScanReport
from explorer.scan.runner import scan_rows, scan_table

__all__ = ["CHECKS", "Finding", "ScanReport", "scan_rows", "scan_table"]
