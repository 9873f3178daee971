"""The UI mirrors the pages: pages/<page>.py draws with explorer/ui/views/<page>.py, and no page branches on the
kind of classifier itself (its view's sections take either kind's analysis)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = {p.stem: p for p in (ROOT / "pages").glob("*.py")}
VIEWS = {p.stem: p for p in (ROOT / "explorer" / "ui" / "views").glob("*.py") if p.stem != "__init__"}
KIND_BRANCH = re.compile(r"is_token_model|TokenAnalysis|token_view|token_pages")


def test_every_page_has_its_view_module_and_draws_with_it():
    assert PAGES and set(PAGES) == set(VIEWS)
    unused = [name for name, page in PAGES.items()
              if not re.search(rf"from explorer\.ui\.views import {name}\b", page.read_text())]
    assert unused == []


def test_no_page_branches_on_the_kind_of_classifier():
    assert KIND_BRANCH.search("a = None if token_view.token_logits() else current_analysis()")  # the check bites
    assert [name for name, page in PAGES.items() if KIND_BRANCH.search(page.read_text())] == []
