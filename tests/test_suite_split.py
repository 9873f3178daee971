"""How the suite is split: `make test` and `make soak` (both run by `.ci/run`) together select every test, neither
selects a test of the other, and the soak set is the one listed here, so a test moved out of `make test` still
runs under `make soak`. And the browser markers follow the fixture, not its name: an AppTest test parametrized
over an argument called `page` is no browser test, so `make test-fast` runs it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from _pytest.mark.expression import Expression

from conftest import ROOT

# The soak set: long load and scale tests. A test leaves `make test` only by being listed here.
SOAK = {
    "tests/test_soak.py",  # every test of the file
    "tests/test_proxy.py",
    "tests/test_audit_scale.py",
    "tests/test_features_scale.py::test_two_cpu_processes_each_with_several_batches_gather_every_row",
    "tests/test_explain_data.py::test_two_processes_give_the_result_of_one",
    "tests/test_scan.py::test_two_processes_give_the_one_process_report",
    "tests/test_scan_duplicates.py::test_neighbour_search_of_20000_rows_stays_in_its_memory_bound",
    "tests/test_scan_causes.py::test_a_fine_tuned_tweet_model_on_unseen_tweets_has_no_shortcut_and_no_major",
}

# Written into a plugin that the collecting pytest loads: each collected test's id and markers, after this
# suite's conftest has added its own (browser, server), which is what -m selects on.
PLUGIN = """
import json, os
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    with open(os.environ["SPLIT_OUT"], "w") as f:
        json.dump({i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in items}, f)
"""


def _make_selection(target: str) -> str:
    """The -m expression of `make <target>`'s pytest line (the Makefile's own)."""
    recipe = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    return re.search(r'-m "([^"]+)"', recipe).group(1)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> dict[str, list[str]]:
    """{test id: its markers} for the whole suite, as a plain `pytest` collects it: this run's collection where it
    was the whole suite (`make test`, `make soak`), otherwise a collection of its own."""
    import conftest

    files = {f"tests/{f.name}" for f in (ROOT / "tests").glob("test_*.py")}
    if files <= {test.split("::")[0] for test in conftest.COLLECTED}:
        return dict(conftest.COLLECTED)
    tmp = tmp_path_factory.mktemp("split")
    (tmp / "split_plugin.py").write_text(PLUGIN)
    out = tmp / "collected.json"
    env = dict(os.environ, SPLIT_OUT=str(out), PYTHONPATH=os.pathsep.join([str(tmp), str(ROOT)]))
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "split_plugin",
                           "-p", "no:randomly", "-o", "addopts=", "tests"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())


def _selected(collected, target: str) -> set[str]:
    expr = Expression.compile(_make_selection(target))
    return {test for test, marks in collected.items() if expr.evaluate(lambda name, marks=marks: name in marks)}


@pytest.mark.server
def test_make_test_and_make_soak_split_the_suite_and_ci_runs_both(collected):
    test, soak = _selected(collected, "test"), _selected(collected, "soak")
    assert len(collected) > 1000
    assert test | soak == set(collected), sorted(set(collected) - test - soak)[:20]  # nothing dropped
    assert not test & soak, sorted(test & soak)[:20]
    # the soak set is the listed one: each listed file or test has tests in it, and every soak test is listed
    for listed in SOAK:
        assert any(t == listed or t.startswith(listed + "::") or t.startswith(listed + "[") for t in soak), listed
    unlisted = [t for t in soak if t.split("::")[0] not in SOAK and t.split("[")[0] not in SOAK]
    assert unlisted == []
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test\b", ci, re.M) and re.search(r"^make soak\b", ci, re.M)


@pytest.mark.server
def test_apptest_tests_with_a_page_parameter_are_not_browser_tests(collected):
    """An AppTest test parametrized over `page` (tests/test_token_pages.py, test_small_views.py) is neither
    browser nor server, so `make test-fast` runs it; a test on the Playwright `page` fixture is both."""
    apptest = [t for t in collected if t.startswith(("tests/test_token_pages.py::test_token_checkpoint_pages_render",
                                                     "tests/test_small_views.py::test_other_with_no_path_on_the_data"))]
    assert len(apptest) >= 10
    fast = Expression.compile(_make_selection("test-fast"))
    for test in apptest:
        assert not {"browser", "server"} & set(collected[test]), test
        assert fast.evaluate(lambda name, test=test: name in collected[test]), test
    playwright = "tests/test_browser_i18n.py::test_chart_hovers_speak_the_chosen_language"
    assert {"browser", "server"} <= set(collected[playwright])
