"""One error type everywhere: every public function refuses every argument's hostile values (wrong type,
NaN, infinity, sign, range, a number of a million digits) with one ExplorerError line, before any work;
the CLI exits 2 with one line for the same."""
from __future__ import annotations

import time

import pandas as pd
import pytest

import explorer
from explorer import api, cli
from explorer.text.errors import ExplorerError

NAN, INF = float("nan"), float("inf")
HUGE = 10 ** (10 ** 6)  # a million digits: str() of it raises past 4,300
WHOLE = ["abc", 1.5, NAN, INF, -1, HUGE, True, None]
OPTIONAL_WHOLE = ["abc", 1.5, NAN, INF, -1, HUGE, True]
TEXT = [5, NAN, b"text", ["a"], None]
OPTIONAL_TEXT = [5, NAN, b"text", ["a"]]
CK = [5, "minilm", None, NAN]
DF = [5, "data.csv", None, NAN, [["a", "b"]]]
HEAD = [5, NAN, None]

# function -> argument -> hostile values; every public function, every argument.
TABLE = {
    "load": {"name": TEXT, "device": OPTIONAL_TEXT, "seed": WHOLE},
    "analyze": {"ck": CK, "text": TEXT, "head": HEAD, "text_pair": OPTIONAL_TEXT, "flow": ["yes", 1, NAN, None],
                "seed": WHOLE, "dtype": OPTIONAL_TEXT},
    "analyze_tokens": {"ck": CK, "text": TEXT, "head": HEAD, "aggregation": TEXT, "seed": WHOLE},
    "attribute": {"ck": CK, "text": TEXT, "method": TEXT, "target": ["positive", NAN, -1, 3, HUGE, 1.0],
                  "head": HEAD, "text_pair": OPTIONAL_TEXT, "seed": WHOLE,
                  "n_steps": OPTIONAL_WHOLE + [0, 10**9], "window": WHOLE + [0], "tolerance": [NAN, INF, -0.1, 0, "x"],
                  "n_samples": OPTIONAL_WHOLE + [0], "target_token": OPTIONAL_WHOLE, "dtype": [5, NAN],
                  "quantity": TEXT, "baseline": TEXT, "progress": [5, "x"], "no_such_option": [1]},
    "attribute_many": {"ck": CK, "texts": ["one text", [5], None, NAN], "method": TEXT,
                       "target": ["positive", [0], [NAN, 0], NAN, -1, HUGE], "head": HEAD,
                       "text_pairs": ["x", [5, 5], ["x"], NAN], "seed": WHOLE,
                       "batch_size": OPTIONAL_WHOLE + [0], "n_steps": OPTIONAL_WHOLE + [10**9],
                       "window": WHOLE + [0], "tolerance": [NAN, INF, -1], "dtype": [5], "no_such_option": [1]},
    "inspect": {"df": DF, "ck": [5, "minilm", NAN], "text": OPTIONAL_TEXT, "label": OPTIONAL_TEXT,
                "text_pair": OPTIONAL_TEXT},
    "audit": {"df": DF, "ck": CK, "text": OPTIONAL_TEXT, "label": OPTIONAL_TEXT, "folds": WHOLE + [1, 101],
              "seed": WHOLE, "max_length": WHOLE + [0], "text_pair": OPTIONAL_TEXT},
    "explain_data": {"df": DF, "ck": CK, "text": OPTIONAL_TEXT, "label": OPTIONAL_TEXT, "text_pair": OPTIONAL_TEXT,
                     "rationale": OPTIONAL_TEXT, "methods": [5, [], [5], None, NAN],
                     "max_rows": OPTIONAL_WHOLE + [0], "head": HEAD, "seed": WHOLE,
                     "flagged": [5, ["a"], [-1], NAN, [HUGE]]},
    "counterfactual": {"ck": CK, "text": TEXT, "text_pair": OPTIONAL_TEXT, "target": ["positive", NAN, -1, 3, HUGE, 1.0],
                       "max_edits": WHOLE + [0, 11, 10**9], "seed": WHOLE},
    "scan": {"df": DF, "ck": CK, "text": OPTIONAL_TEXT, "label": OPTIONAL_TEXT, "text_pair": OPTIONAL_TEXT,
             "seed": WHOLE, "batch_size": WHOLE + [0], "max_length": WHOLE + [0, -5], "progress": [5, "x"],
             "checks": [5, "nope", ["nope"], [5], [], NAN], "baseline": [5, "minilm", NAN, ["a"]]},
}
CASES = [(f, a, i) for f, args in TABLE.items() for a, values in args.items() for i in range(len(values))]


def test_the_table_covers_every_public_function_and_argument():
    import inspect

    assert set(TABLE) == set(api.__all__) - {"AuditResult", "DataReport"}
    for name, args in TABLE.items():
        named = {p for p, v in inspect.signature(getattr(api, name)).parameters.items() if v.kind != v.VAR_KEYWORD}
        assert named <= set(args), (name, named - set(args))


@pytest.fixture(scope="module")
def base(tiny, tiny_root):
    ck = tiny["bert"]
    df = pd.DataFrame({"text": ["a fine day", "a sad day", "so so", "great"], "label": ["alpha", "beta"] * 2})
    return {"load": dict(name=str(tiny_root / "tiny-bert")), "analyze": dict(ck=ck, text="a fine day"),
            "analyze_tokens": dict(ck=ck, text="a fine day"), "attribute": dict(ck=ck, text="a fine day"),
            "attribute_many": dict(ck=ck, texts=["a fine day", "a sad day"]), "inspect": dict(df=df),
            "audit": dict(df=df, ck=ck), "explain_data": dict(df=df, ck=ck),
            "counterfactual": dict(ck=ck, text="a fine day"), "scan": dict(df=df, ck=ck)}


def _shown(value) -> str:
    try:
        return repr(value)[:30]
    except ValueError:  # holds HUGE
        return "HUGE"


@pytest.mark.parametrize("function,argument,i", CASES,
                         ids=[f"{f}-{a}-{_shown(TABLE[f][a][i])}" for f, a, i in CASES])
def test_every_hostile_argument_is_one_explorer_error_line(base, function, argument, i):
    value = TABLE[function][argument][i]
    start = time.perf_counter()
    with pytest.raises(ExplorerError) as err:
        getattr(explorer, function)(**{**base[function], argument: value})
    assert time.perf_counter() - start < 10  # refused before any work
    text = str(err.value)
    assert text and "\n" not in text and len(text) < 400, text


@pytest.mark.parametrize("args", [
    ["analyze", "--text", "hi", "--seed", "9" * 100_000],
    ["attribute", "--text", "hi", "--method", "saliency", "--target", "9" * 100_000],
])
def test_the_cli_exits_2_with_one_line_for_a_huge_number(tiny_root, capsys, args):
    assert cli.main([*args, "--checkpoint", str(tiny_root / "tiny-bert")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("error:") and "unexpected" not in err[0]


def test_the_callable_package_and_api_scan_are_one_function(base):
    """explorer.scan(df, ck) (the package) goes through api.scan's checks: the same refusal, word for word."""
    with pytest.raises(ExplorerError) as package:
        explorer.scan(**{**base["scan"], "seed": -1})
    with pytest.raises(ExplorerError) as function:
        api.scan(**{**base["scan"], "seed": -1})
    assert str(package.value) == str(function.value)


def test_a_label_of_thousands_of_digits_is_a_name(tmp_path, capsys):
    path = tmp_path / "digits.csv"
    path.write_text("text,label\n" + "".join(f"row {i},{'9' * 5000 if i % 2 else '1'}\n" for i in range(10)))
    assert cli.main(["inspect-data", "--csv", str(path)]) == 0  # was "unexpected ValueError", exit 1
    assert capsys.readouterr().err == ""
