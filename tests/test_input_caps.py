"""Bounded cost before any work: cells, columns and labels capped where a table is read (page, CLI and
library alike), the audit's rows x labels x folds, a checkpoint's JSON files, and downloads that are
comma-separated and quoted whatever the upload's delimiter. Each limit's message names its setting."""
from __future__ import annotations

import csv
import io
import json
import shutil
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import explorer
from explorer import cli
from explorer.data import audit_export, labels
from explorer.data.dataset import DataError, checked_table, read_csv
from explorer.model.checkpoints import load_checkpoint
from explorer.model.problem import ProblemType
from explorer.runtime import budget
from explorer.text.errors import ExplorerError

FORMULA_CELL = "nice film,=cmd|' /C calc'!A0"


def _one_line(err: BaseException, env: str) -> str:
    text = str(err)
    assert "\n" not in text and env in text, text
    return text


def _csv(rows: list[list[str]], delimiter: str = ",") -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _cli(capsys, *args) -> tuple[int, list[str]]:
    code = cli.main(list(args))
    return code, [line for line in capsys.readouterr().err.splitlines() if line.strip()]


# ---- one long cell ------------------------------------------------------------------------------

def test_a_long_cell_is_refused_where_the_csv_is_read(tmp_path, capsys):
    cell = "word " * 200_000  # a million characters, far past the cap
    data = _csv([["text", "label"], ["fine", "pos"], [cell, "neg"]])
    start = time.perf_counter()
    with pytest.raises(DataError) as err:
        read_csv(data)
    assert time.perf_counter() - start < 5
    text = _one_line(err.value, "HEAD_EXPLORER_CELL_CHARS")
    assert "row 3" in text and "'text'" in text
    path = tmp_path / "long.csv"
    path.write_bytes(data)
    code, err_lines = _cli(capsys, "inspect-data", "--csv", str(path))
    assert code == 2 and len(err_lines) == 1 and "HEAD_EXPLORER_CELL_CHARS" in err_lines[0]


def test_a_long_cell_in_a_dataframe_is_refused_by_the_library(monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_CELL_CHARS", "50")
    df = pd.DataFrame({"text": ["short", "x" * 51], "label": ["a", "b"]})
    with pytest.raises(ExplorerError) as err:
        explorer.inspect(df)
    _one_line(err.value, "HEAD_EXPLORER_CELL_CHARS")
    explorer.inspect(df.assign(text=["short", "x" * 50]))  # at the limit: read


# ---- many columns ---------------------------------------------------------------------------------

def test_a_hundred_thousand_columns_are_refused_before_pandas_reads_them():
    header = [f"c{i}" for i in range(100_000)]
    data = _csv([header] + [["1"] * len(header) for _ in range(20)])  # 4.7 MB, under the upload cap
    start = time.perf_counter()
    with pytest.raises(DataError) as err:
        read_csv(data)
    assert time.perf_counter() - start < 5
    assert "100,000" in _one_line(err.value, "HEAD_EXPLORER_COLUMNS")


def test_the_duplicate_column_check_is_linear(monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_COLUMNS", "200000")
    names = [f"c{i}" for i in range(100_000)]
    start = time.perf_counter()
    checked_table(pd.DataFrame(np.zeros((1, len(names)), dtype=object), columns=names), "wide")
    assert time.perf_counter() - start < 10  # linear: a count per name would take minutes
    with pytest.raises(DataError, match="c7"):  # still finds a repeated name
        checked_table(pd.DataFrame([["1"] * 3], columns=["c7", "x", "c7 "]), "twice")


# ---- many labels ----------------------------------------------------------------------------------

def _many_labels(n_labels: int = 10_000, per_label: int = 2) -> pd.DataFrame:
    return pd.DataFrame({"text": [f"row {i}" for i in range(n_labels * per_label)],
                         "label": [f"label {i // per_label}" for i in range(n_labels * per_label)]})


def test_ten_thousand_labels_are_refused_before_any_model_runs(tiny, tmp_path, capsys):
    df = _many_labels()
    for call in (lambda: explorer.inspect(df), lambda: explorer.inspect(df, tiny["bert"]),
                 lambda: explorer.audit(df, tiny["bert"])):
        start = time.perf_counter()
        with pytest.raises(ExplorerError) as err:
            call()
        assert time.perf_counter() - start < 20
        assert "10,000" in _one_line(err.value, "HEAD_EXPLORER_LABELS")
    path = tmp_path / "labels.csv"
    df.to_csv(path, index=False)
    code, err_lines = _cli(capsys, "inspect-data", "--csv", str(path), "--checkpoint", tiny["bert"].source,
                           "--label-issues")
    assert code == 2 and len(err_lines) == 1 and "HEAD_EXPLORER_LABELS" in err_lines[0]


def test_the_audit_is_sized_rows_by_labels_by_folds(tiny, monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_AUDIT_WORK", "1000")
    budget.check_label_work(100, 2, 5)  # 1,000: at the limit
    with pytest.raises(ExplorerError) as err:
        budget.check_label_work(100, 2, 6)
    assert "1,200" in _one_line(err.value, "HEAD_EXPLORER_AUDIT_WORK")
    with pytest.raises(ExplorerError) as err:  # 200 rows x 50 labels x 4 folds, refused before any feature
        explorer.audit(_many_labels(50, 4), tiny["bert"])
    _one_line(err.value, "HEAD_EXPLORER_AUDIT_WORK")


# ---- downloads: comma-separated and quoted ----------------------------------------------------------

def _read_back(data: bytes) -> list[list[str]]:
    """The download as a spreadsheet that splits on commas reads it."""
    lines = data.decode().splitlines()
    assert all(line.startswith('"') and line.endswith('"') for line in lines)  # every cell quoted
    return list(csv.reader(io.StringIO(data.decode()), delimiter=","))


def _upload(delimiter: str) -> bytes:
    return _csv([["text", "label"], [FORMULA_CELL, "Alpha"], ["a calm day", "Beta"], ["so so", "Gamma"],
                 ["fine", "Alpha"]], delimiter)


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_downloads_are_comma_separated_whatever_the_upload(delimiter, tiny, tmp_path, capsys):
    table = read_csv(_upload(delimiter))
    assert table.delimiter == delimiter
    report = labels.label_report(table)
    found = SimpleNamespace(data=SimpleNamespace(label_columns=("label",)), problem_type=ProblemType.SINGLE,
                            suggested=lambda row: "Beta")
    path = tmp_path / "upload.csv"
    path.write_bytes(_upload(delimiter))
    out = tmp_path / "fixed.csv"
    code, _ = _cli(capsys, "inspect-data", "--csv", str(path), "--checkpoint", tiny["bert"].source,
                   "--out-csv", str(out))
    assert code == 0
    downloads = {"data page": labels.corrected_csv(table, report),
                 "label audit": audit_export.relabelled_csv(table, found, [0]),
                 "cli --out-csv": out.read_bytes()}
    for where, data in downloads.items():
        rows = _read_back(data)
        assert rows[0] == ["text", "label"], where
        assert rows[1][0] == FORMULA_CELL and all(len(r) == 2 for r in rows), where  # one cell, no formula
        assert not any(cell.startswith("=") for r in rows for cell in r), where
    assert _read_back(downloads["label audit"])[1][1] == "Beta"
    assert _read_back(downloads["cli --out-csv"])[1][1] in ("alpha", "beta", "gamma")  # the fix was applied


# ---- a checkpoint's JSON files ------------------------------------------------------------------------

@pytest.mark.parametrize("file", ["config.json", "tokenizer.json"])
def test_a_checkpoint_json_file_over_the_cap_is_refused_before_it_is_read(file, tiny_root, tmp_path_factory,
                                                                          monkeypatch):
    folder = tiny_root / f"big-{file.split('.')[0]}"
    shutil.copytree(tiny_root / "tiny-bert", folder)
    path = folder / file
    padding = " " * (2 * 2**20)  # JSON allows any amount of white space: 2 MB that parse as the same file
    path.write_text(json.dumps(json.loads(path.read_text()))[:-1] + padding + "}")
    monkeypatch.setenv("HEAD_EXPLORER_JSON_MB", "1")
    with pytest.raises(ExplorerError) as err:
        load_checkpoint(str(folder))
    assert file in _one_line(err.value, "HEAD_EXPLORER_JSON_MB")
    monkeypatch.setenv("HEAD_EXPLORER_JSON_MB", "64")
    assert load_checkpoint(str(folder)).labels == tiny_root_labels(tiny_root)
    shutil.rmtree(folder)


def tiny_root_labels(tiny_root) -> tuple[str, ...]:
    return tuple(json.loads((tiny_root / "tiny-bert" / "config.json").read_text())["id2label"].values())
