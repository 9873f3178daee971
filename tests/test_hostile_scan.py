"""Hostile input to the scan's own surface, in the CLI and in the library: labels of thousands of digits, labels no
name of the checkpoint matches (strict JSON), output paths that cannot be new files (nothing written, the user's
files intact), every argument of explorer.scan and scan_rows, a named label column whose cells look like label
sets or scores, huge numbers on the command line, and a closed tab's scan freed between forward batches."""
from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

import explorer
from explorer import cli
from explorer.results import HTML, write_new_files
from explorer.runtime.jobs import Cancelled, Jobs
from explorer.scan import scan_rows
from explorer.text.errors import ExplorerError
from tests.conftest import wait_until

torch.set_num_threads(1)
HUGE_LABEL = "1" * 4400  # past Python's 4,300-digit limit on int()


def _strict(text: str):
    """json.loads that refuses NaN and Infinity, as every other JSON parser does."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def work(tmp_path, monkeypatch, tiny_root):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ck_args(tiny_root):
    return ["--checkpoint", str(tiny_root / "tiny-bert")]


def _one_error(capsys, needle: str) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert needle in lines[0], lines[0]
    assert ".head-explorer-" not in lines[0]  # never a temporary file's name
    return lines[0]


# ---- labels are names ---------------------------------------------------------------------------------------

def test_a_label_of_4400_digits_is_a_name_in_scan_inspect_and_the_library(work, tiny_root, tiny, capsys):
    rows = [(f"row number {i} here", HUGE_LABEL if i % 2 else "alpha") for i in range(12)]
    pd.DataFrame(rows, columns=["text", "label"]).to_csv("digits.csv", index=False)
    assert cli.main(["scan", "--csv", "digits.csv", *_ck_args(tiny_root), "--label-column", "label", "--json"]) == 0
    out = capsys.readouterr()
    assert _strict(out.out)["rows"] == 12
    assert cli.main(["inspect-data", "--csv", "digits.csv", *_ck_args(tiny_root), "--json"]) == 0
    assert _strict(capsys.readouterr().out)
    report = explorer.scan(pd.DataFrame(rows, columns=["text", "label"]), tiny["bert"], label="label")
    assert report.rows == 12 and HUGE_LABEL in report.given


# ---- strict JSON --------------------------------------------------------------------------------------------

def test_no_label_matching_the_checkpoint_prints_strict_json_with_null_figures(work, tiny_root, tiny, capsys):
    df = pd.DataFrame({"text": [f"text {i} of the rows" for i in range(100)],
                       "label": [f"nomatch{i}" for i in range(100)]})  # 100 rows, 100 labels, none the checkpoint's
    df.to_csv("labels.csv", index=False)
    assert cli.main(["scan", "--csv", "labels.csv", *_ck_args(tiny_root), "--label-column", "label", "--json"]) == 0
    printed = capsys.readouterr().out
    assert "NaN" not in printed and "Infinity" not in printed
    got = _strict(printed)
    # no row whose label the checkpoint names: the NLL of no rows is undefined, null, and the report says why
    assert got["calibration"]["nll"] is None and got["calibration"]["nll_scaled"] is None
    assert {"check": "calibration.ece", "why": "no row's label is one of the checkpoint's names: its NLL and "
            "calibration are undefined (null)"} in got["not_applicable"]
    report = explorer.scan(df, tiny["bert"], label="label")
    assert _strict(report.to_json()) == _strict(json.dumps(_strict(report.to_json())))


def test_every_result_json_is_strict():
    from explorer.results import JsonResult, strict_json

    class Figures(JsonResult):
        def to_dict(self):
            return {"nan": float("nan"), "inf": [float("inf")], "ok": 0.5}

    assert _strict(Figures().to_json()) == {"nan": None, "inf": [None], "ok": 0.5}
    assert strict_json({"x": float("-inf")}) == '{"x": null}'


# ---- outputs: checked before any work, all or none, the user's files intact -------------------------------------

@pytest.fixture
def csv(work):
    pd.DataFrame({"text": [f"row {i} of text" for i in range(8)], "label": ["alpha", "beta"] * 4}).to_csv(
        "rows.csv", index=False)
    return "rows.csv"


@pytest.fixture
def no_scan(monkeypatch):
    """Fails the test if the scan starts: every path is refused before any work."""
    import explorer.scan as package

    def refuse(*args, **kwargs):
        raise AssertionError("the scan ran before the output paths were checked")
    monkeypatch.setattr(package, "scan_table", refuse)


@pytest.mark.parametrize("out,out_csv,needle", [
    ("a.html", "missing/dir/r.csv", "missing/dir/r.csv"),
    ("same.out", "same.out", "same file"),
    ("", None, "not a file name"),
    ("x" * 300 + ".html", None, "longer than"),
    ("a.html", "taken.csv", "already exists"),
    ("a.html", "link.csv", "not a regular file"),
    ("a.html", "folder", "not a regular file"),
    ("a.html", "folder/", "not a file name"),
    ("/dev/null", None, "not a regular file"),
])
def test_a_bad_output_path_is_refused_before_the_scan_and_nothing_is_written(work, csv, tiny_root, capsys, no_scan,
                                                                              out, out_csv, needle):
    Path("taken.csv").write_text("mine\n")
    Path("target.txt").write_text("target\n")
    os.symlink("target.txt", "link.csv")
    Path("folder").mkdir()
    before = {p: p.read_bytes() if p.is_file() else None for p in work.iterdir()}
    args = ["scan", "--csv", csv, *_ck_args(tiny_root), "--out", out] + (["--out-csv", out_csv] if out_csv else [])
    assert cli.main(args) == 2
    _one_error(capsys, needle)
    after = {p: p.read_bytes() if p.is_file() else None for p in work.iterdir()}
    assert after == before  # nothing new, nothing changed
    assert os.path.islink("link.csv") and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_the_second_output_failing_at_write_time_removes_the_first(work, csv, tiny_root, capsys, monkeypatch):
    real = os.link

    def link(src, dst, *args, **kwargs):
        if str(dst).endswith(".csv"):
            raise OSError(28, "No space left on device")
        return real(src, dst, *args, **kwargs)
    monkeypatch.setattr(os, "link", link)
    assert cli.main(["scan", "--csv", csv, *_ck_args(tiny_root), "--out", "a.html", "--out-csv", "r.csv"]) == 2
    _one_error(capsys, "'r.csv' could not be written (No space left on device)")
    assert sorted(p.name for p in work.iterdir()) == ["rows.csv"]


def test_both_outputs_are_written_whole(work, csv, tiny_root, capsys):
    assert cli.main(["scan", "--csv", csv, *_ck_args(tiny_root), "--out", "a.html", "--out-csv", "r.csv"]) == 0
    assert Path("a.html").read_text().startswith("<!doctype html>") and Path("r.csv").read_text().startswith('"row"')
    assert sorted(p.name for p in work.iterdir()) == ["a.html", "r.csv", "rows.csv"]
    assert oct(os.stat("a.html").st_mode & 0o777) != oct(0o600)  # a new file's usual permissions, not mkstemp's


@pytest.fixture(scope="module")
def small_report(tiny):
    return scan_rows(tiny["bert"], ["a fine day", "a sad day", "so so", "great"], given=["alpha", "beta"] * 2,
                     checks=["head", "calibration"])


@pytest.mark.parametrize("kind", ["existing", "symlink", "folder", "missing", "device"])
def test_save_html_writes_only_a_new_file(work, small_report, kind):
    Path("mine.html").write_text("mine")
    os.symlink("mine.html", "link.html")
    Path("dir").mkdir()
    path = {"existing": "mine.html", "symlink": "link.html", "folder": "dir", "missing": "nowhere/r.html",
            "device": "/dev/null"}[kind]
    with pytest.raises(ExplorerError) as err:
        small_report.save_html(path)
    assert path in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ExplorerError):
        HTML("<p>x</p>").save(path)
    assert Path("mine.html").read_text() == "mine" and os.path.islink("link.html")
    assert sorted(p.name for p in work.iterdir()) == ["dir", "link.html", "mine.html"]
    assert list(Path("dir").iterdir()) == []


def test_write_new_files_refuses_a_path_that_appears_meanwhile_and_keeps_it(work, monkeypatch):
    import explorer.results as results

    real = results._new_temporary

    def racing(folder):  # another program creates the path between the check and the link
        Path("late.txt").write_text("theirs")
        return real(folder)
    monkeypatch.setattr(results, "_new_temporary", racing)
    with pytest.raises(ExplorerError, match="already exists"):
        write_new_files({"first.txt": b"1", "late.txt": b"2"})
    assert Path("late.txt").read_text() == "theirs" and sorted(p.name for p in work.iterdir()) == ["late.txt"]


# ---- every argument of explorer.scan and scan_rows -------------------------------------------------------------

NAN, INF, HUGE = float("nan"), float("inf"), 10 ** (10 ** 5)
ROWS_BAD = {
    "ck": [5, "minilm", None],
    "texts": ["one text", [5], None, NAN],
    "given": ["alpha", [5, 5, 5, 5], ["alpha"], NAN],
    "pairs": ["x", [5] * 4, ["x"], NAN],
    "seed": ["abc", 1.5, NAN, INF, -1, HUGE, True, None],
    "batch_size": ["abc", 0, -1, 1.5, NAN, HUGE, True, None],
    "max_length": ["abc", 0, -5, 1.5, INF, HUGE, None],
    "progress": [5, "x"],
    "checks": [5, "nope", ["nope"], [5], [], NAN],
}
ROW_CASES = [(a, i) for a, values in ROWS_BAD.items() for i in range(len(values))]


@pytest.mark.parametrize("argument,i", ROW_CASES, ids=[f"{a}-{i}" for a, i in ROW_CASES])
def test_scan_rows_refuses_every_hostile_argument_in_one_line(tiny, argument, i):
    base = dict(ck=tiny["bert"], texts=["a", "b", "c", "d"], given=["alpha", "beta"] * 2, pairs=None)
    start = time.perf_counter()
    with pytest.raises(ExplorerError) as err:
        scan_rows(**{**base, argument: ROWS_BAD[argument][i]})
    assert time.perf_counter() - start < 5  # before any work
    assert "\n" not in str(err.value) and len(str(err.value)) < 1000


def test_an_unknown_check_lists_the_known_ones(tiny):
    with pytest.raises(ExplorerError, match="no scan check is named .nope.; the checks are the groups .*head.*e.g. "):
        explorer.scan(pd.DataFrame({"text": ["a", "b"], "label": ["alpha", "beta"]}), tiny["bert"], checks=["nope"])


# ---- a named label column is one label per row -----------------------------------------------------------------

@pytest.mark.parametrize("labels", [["a,b", "c;d", "e|f", "g"] * 3, ["0.0", "0.5", "1.0", "0.5"] * 3])
def test_a_named_label_column_is_read_as_one_label_per_row_and_says_so(work, tiny_root, tiny, capsys, labels):
    df = pd.DataFrame({"text": [f"text {i} here" for i in range(12)], "label": labels})
    df.to_csv("odd.csv", index=False)
    assert cli.main(["scan", "--csv", "odd.csv", *_ck_args(tiny_root), "--label-column", "label", "--json"]) == 0
    out = capsys.readouterr()
    assert "note: the label column 'label' is read as one label per row" in out.err
    got = _strict(out.out)
    assert not any("label column" in n["why"] for n in got["not_applicable"]), got["not_applicable"]
    report = explorer.scan(df, tiny["bert"], label="label")
    assert report.given == tuple(v.removesuffix(".0") for v in labels)  # "1.0" and "1" are one class


def test_a_cell_of_100000_characters_of_words_is_scanned(work, tiny_root, tiny, capsys):
    words = ("word " * 20_000).strip()  # 100,000 characters, 20,000 words: within the documented cell cap
    df = pd.DataFrame({"text": [words, "short one", "another", "last"], "label": ["alpha", "beta"] * 2})
    assert explorer.scan(df, tiny["bert"], label="label", checks=["head"]).rows == 4
    df.to_csv("long.csv", index=False)
    assert cli.main(["scan", "--csv", "long.csv", *_ck_args(tiny_root), "--label-column", "label", "--json"]) == 0
    assert _strict(capsys.readouterr().out)["rows"] == 4


# ---- the command line's numbers --------------------------------------------------------------------------------

def test_a_seed_of_5000_digits_is_out_of_range_not_not_a_number(work, csv, tiny_root, capsys):
    assert cli.main(["scan", "--csv", csv, *_ck_args(tiny_root), "--seed", "9" * 5000]) == 2
    line = _one_error(capsys, "out of range")
    assert "5,000 digits" in line and len(line) < 200


def test_max_rows_says_it_refuses_a_longer_file(work, csv, tiny_root, capsys):
    assert cli.main(["scan", "--csv", csv, *_ck_args(tiny_root), "--max-rows", "5"]) == 2
    _one_error(capsys, "more than 5 rows")
    assert "refuse a CSV of more rows than this" in cli.build_parser()._subparsers._group_actions[0].choices[
        "scan"].format_help()


# ---- a closed tab's scan is freed between forward batches ------------------------------------------------------

def _scan_job(ck, texts, given, batch_size):
    """The page's scan as ui.run's queued job runs it (explorer/ui/running.py): its progress checks the stop flag."""
    def work(progress, stopping):
        def report(frac: float, msg: str) -> None:
            if stopping():
                raise Cancelled("user")
            progress({"frac": frac, "msg": msg})
        return scan_rows(ck, texts, given=given, batch_size=batch_size, progress=report)
    return work


def test_owners_gone_free_their_running_scans_within_grace_and_one_batch(tiny):
    ck = tiny["bert"]
    texts = [f"row {i} " + "word " * (i % 60) for i in range(3000)]
    given = ["alpha", "beta", "gamma"] * 1000
    start = time.perf_counter()
    scan_rows(ck, texts[:16], given=given[:16], batch_size=16,
              checks=["head"])  # one batch's forward and the scan's setup
    batch_s = time.perf_counter() - start
    grace = 0.5
    jobs = Jobs(slots=2, grace=grace, poll=0.05, queue=20)
    here = {f"tab{i}": True for i in range(12)}
    started = [jobs.start(owner, "scan", owner, _scan_job(ck, texts, given, 16), alive=lambda o=owner: here[o])
               for owner in here]
    running = [j for j in started if j.started is not None]
    assert len(running) == 2 and all(j is not None for j in started)
    for job in running:
        wait_until(lambda j=job: _past_a_batch(j), timeout=60, what="a first forward batch")
    assert not any(j.done for j in running)
    gone = time.perf_counter()
    for owner in here:  # twelve tabs close at once
        here[owner] = False
    limit = grace + 0.05 + 10 * batch_s + 2.0  # grace, a poll, a batch (slack for a busy core)
    for job in started:
        assert job.wait(timeout=limit + 30), f"{job.name} still running"
    took = time.perf_counter() - gone
    assert all(j.why == "owner gone" and j.result is None for j in started)
    print(f"12 owners gone: every scan freed in {took:.2f} s (grace {grace} s, one batch {batch_s:.3f} s)")
    assert took < limit, (took, limit, batch_s)
    assert jobs.free == 2 and jobs.waiting() == []


def _past_a_batch(job) -> bool:
    return job.done or any(p["msg"].startswith("forward: ") and p["frac"] > 0 for p in list(job.progress))


# ---- a long scan's progress on the command line ----------------------------------------------------------------

def test_the_cli_shows_progress_and_the_time_left_only_on_a_terminal(work, csv, tiny_root, capsys, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal, piped = Terminal(), sys.stderr
    monkeypatch.setattr(sys, "stderr", terminal)
    got = cli.main(["scan", "--csv", csv, *_ck_args(tiny_root), "--json"])
    drawn = terminal.getvalue()
    assert got == 0, drawn[-300:]
    assert "scan " in drawn and " left" in drawn and "forward: " in drawn, drawn[-300:]
    monkeypatch.setattr(sys, "stderr", piped)
    capsys.readouterr()
    assert cli.main(["scan", "--csv", csv, *_ck_args(tiny_root), "--json"]) == 0
    out = capsys.readouterr()
    assert " left" not in out.err and _strict(out.out)["rows"] == 8  # piped: stderr keeps to its n/a lines
