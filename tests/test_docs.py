"""The README fits on a screen and says what it promises (its links resolve, its teacher's link is a real page,
its library example runs); the docs site builds offline with --strict, its API page lists the public functions,
and bench/RESULTS.md is what its generator writes from bench/results.json."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from bench.results import JSON, MARKDOWN, render

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PUBLIC = ("load", "analyze", "analyze_tokens", "attribute", "attribute_many", "inspect", "audit", "explain_data",
          "rollout", "cls_attention", "readout", "model_view", "head_view", "attribution", "highlight")


def test_the_readme_fits_on_a_screen():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_every_relative_link_of_the_readme_resolves():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not urlparse(link).scheme]
    assert "docs/img/app.png" in local and "bench/RESULTS.md" in local
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_the_teachers_link_opens_a_real_page():
    """The shared links in the README name pages app.py serves (their url_path), not file stems."""
    slugs = set(re.findall(r'\("pages/\w+\.py", "\w+", "([\w-]+)"', (ROOT / "app.py").read_text(encoding="utf-8")))
    assert "guided-lesson" in slugs
    linked = re.findall(r"`(?:http://HOST:8501)?/([\w-]+)\?[^`]*`", README.read_text(encoding="utf-8"))
    assert "guided-lesson" in linked and set(linked) <= slugs, (linked, slugs)


@pytest.mark.server
def test_the_readme_library_example_runs(tmp_path):
    """The README's five lines, run as they stand in a fresh process (in an empty folder: it writes a file)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) == 5, blocks
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] in ("negative", "neutral", "positive"), done.stdout
    assert (tmp_path / "rollout.html").stat().st_size > 1000


def test_the_home_page_lists_every_page_of_the_site():
    """docs/index.md's page list links every page of the navigation (Scan and the guides included)."""
    nav = re.findall(r"^  - [^:]+: ([\w-]+\.md)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert len(nav) >= 10 and "scan.md" in nav
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", (ROOT / "docs" / "index.md").read_text(encoding="utf-8")))
    assert [page for page in nav if page != "index.md" and page not in linked] == []


def test_results_md_is_what_the_generator_writes():
    assert MARKDOWN.read_text(encoding="utf-8") == render(json.loads(JSON.read_text(encoding="utf-8"))), \
        "run `.venv/bin/python -m bench.results` to rewrite bench/RESULTS.md"


def test_the_recorded_figures_keep_every_row():
    """results.json keeps the recorded table whole: every row has every column, none empty."""
    sections = json.loads(JSON.read_text(encoding="utf-8"))["sections"]
    rows = [row for section in sections for row in section["rows"]]
    assert len(rows) >= 50
    assert all(set(row) == {"figure", "ours", "baseline", "ratio", "target"} and all(row.values()) for row in rows)


def test_make_bench_rows_render_as_the_same_table():
    """What `make bench` writes (a list of numeric rows) renders too, so RESULTS.md follows a new bench run."""
    text = render([{"module": "bench_explore", "name": "analyze 21 tokens", "value": 10.8, "baseline": 10.0,
                    "ratio": 1.08, "target": "<= 1.5x", "unit": "ms", "ok": True}])
    assert "| analyze 21 tokens (bench_explore) | 10.8 ms | 10 ms | 1.08× | <= 1.5x ✓ |" in text


class _Refs(HTMLParser):
    """Every script src and link href of a page."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.refs.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.refs.append(attrs["href"])


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.mark.server
def test_the_api_page_lists_the_public_functions(site):
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    missing = [name for name in PUBLIC if not re.search(rf'id="explorer\.(api|figures)\.{name}"', page)]
    assert missing == []
    assert 'id="explorer.scan.runner.scan_frame"' in page  # explorer.scan(df, ck)


@pytest.mark.server
def test_the_api_page_shows_a_parameter_table_for_each_function(site):
    """mkdocstrings renders each function's `Args:` section as a "Parameters" table (tests/test_signatures.py
    checks that the docstrings name every parameter)."""
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    heads = list(re.finditer(r'<h[23] id="(explorer\.[\w.]+)"', page))
    sections = {m.group(1): page[m.end():n.start() if n else len(page)] for m, n in zip(heads, heads[1:] + [None])}
    functions = [f"explorer.api.{name}" for name in PUBLIC[:8]] + [f"explorer.figures.{name}" for name in PUBLIC[8:]]
    functions += ["explorer.api.counterfactual", "explorer.scan.runner.scan_frame"]
    assert [f for f in functions if f not in sections] == []
    assert [f for f in functions if 'doc-section-title">Parameters:' not in sections[f]] == []


@pytest.mark.server
def test_the_site_loads_nothing_from_another_host(site):
    """Read offline: no script or stylesheet (Google fonts included) comes from outside the site."""
    outside = []
    for html in site.rglob("*.html"):
        parser = _Refs()
        parser.feed(html.read_text(encoding="utf-8"))
        outside += [f"{html.relative_to(site)}: {ref}" for ref in parser.refs if urlparse(ref).scheme in ("http", "https")
                    or ref.startswith("//")]
    assert outside == []
    assert "fonts.googleapis" not in "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
