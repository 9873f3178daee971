"""Scan a checkpoint on its data: every check that applies, one report of what is wrong with the model, its
head, its label mapping and its labels (`explorer.scan(df, ck)`, `scan_rows`, `scan_table`; the registry in
`base.CHECKS`).

Each check is a module under `explorer/scan/checks/`, found by the package itself; checks run in the order their
declared `needs` give: the head first (no data needed), then the mapping, which sets how every later check reads
the data's labels.

The package itself is callable: `explorer.scan` names this package once anything has imported it (Python sets a
package's submodules as its attributes), so `explorer.scan(df, ck)` calls `arguments.scan` (each argument checked,
then `scan_frame`) through the package; `scan_rows` here checks its arguments the same way.
"""
import sys
import types

from explorer.scan import checks as _checks
from explorer.scan.arguments import scan, scan_rows
from explorer.scan.base import CHECKS, Finding
from explorer.scan.report import ScanReport
from explorer.scan.runner import scan_frame, scan_table

_checks.load_checks()  # registers every check module under explorer/scan/checks/

__all__ = ["CHECKS", "Finding", "ScanReport", "scan", "scan_frame", "scan_rows", "scan_table"]


class _CallablePackage(types.ModuleType):
    def __call__(self, df, ck, **options) -> ScanReport:
        return scan(df, ck, **options)


sys.modules[__name__].__class__ = _CallablePackage
