"""A scan check is one module: the example of docs/scan-checks.md, dropped into the checks package of a fresh
process, is found, ordered, run and reported (JSON, CSV flags, its deeper page), with no other file touched; and the
registry refuses what would make the run order ambiguous."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "scan-checks.md"


def test_the_documented_check_is_one_file_that_the_scan_finds_and_reports(tmp_path, tiny_root):
    code = re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S).group(1)
    (tmp_path / "short_rows.py").write_text(code, encoding="utf-8")
    probe = f"""
import json, sys
import explorer.scan.checks as checks
checks.__path__.append({str(tmp_path)!r})
from explorer.model.checkpoints import load_checkpoint
from explorer.scan import scan_rows
from explorer.scan.base import deeper_page, ordered, CHECKS
ck = load_checkpoint({str(tiny_root / "tiny-bert")!r})
short = scan_rows(ck, ["two words", "a text with enough words in it", "one"], given=["alpha", "beta", "gamma"])
clean = scan_rows(ck, ["a text with enough words", "another text with words"], given=["alpha", "beta"])
print(json.dumps({{"short": short.to_dict(), "clean": clean.to_dict(), "ran": list(clean.ran),
                  "deeper": deeper_page("data.short_rows"), "flags": short.row_flags()["flags"].tolist()}}))
"""
    import os
    env = dict(os.environ, HF_HUB_OFFLINE="1", HEAD_EXPLORER_ROOTS=str(tiny_root), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    d = json.loads(out.stdout.strip().splitlines()[-1])
    found = [f for f in d["short"]["findings"] if f["check"] == "data.short_rows"]
    assert len(found) == 1 and found[0]["rows"] == [0, 2] and found[0]["severity"] == "info"
    assert "data.short_rows" in d["flags"][0] and "data.short_rows" not in d["flags"][1]
    # the clean control: it ran and found nothing
    assert "data.short_rows" in d["ran"] and not [f for f in d["clean"]["findings"] if f["check"] == "data.short_rows"]
    assert d["deeper"] == "pages/data.py"


def test_a_check_id_is_registered_once_and_a_cause_is_a_known_kind():
    from explorer.scan.base import check
    from explorer.text.errors import ExplorerError
    with pytest.raises(ExplorerError, match="twice"):
        check("head.untrained", lambda d: None)(lambda *a: [])
    with pytest.raises(ExplorerError, match="cause"):
        check("x.new", lambda d: None, cause="sometimes")(lambda *a: [])


def test_every_check_needs_only_registered_checks_and_names_a_page_and_a_title():
    from explorer.scan import CHECKS
    from explorer.scan.base import needed
    from explorer.text import i18n
    pages = {p.name for p in (ROOT / "pages").glob("*.py")}
    for c in CHECKS:
        for want in c.needs:
            assert any(o.name == want or o.name.startswith(want + ".") for o in CHECKS), (c.name, want)
        # each need is read from the checks it names, and nothing else is
        assert {o.name for o in needed(c)} == {o.name for o in CHECKS if o.name != c.name and any(
            o.name == w or o.name.startswith(w + ".") for w in c.needs)}, c.name
        assert c.deeper and c.deeper.split("/")[-1] in pages, c.name
        for lang in ("en", "vi"):
            assert f"errors.{c.title.key}" in i18n.strings(lang), (c.name, lang)
