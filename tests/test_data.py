"""CSV reading: encodings, delimiters, columns, label shapes, and every bad input as one DataError line."""
import json

import numpy as np
import pytest

from explorer.data.dataset import DataError, demo_frame, guess_columns, prepare, read_csv
from explorer.model.problem import ProblemType


def _one_line(err) -> str:
    msg = str(err.value)
    assert msg and "\n" not in msg and "Traceback" not in msg
    return msg


def test_demo_frame_is_balanced():
    df = demo_frame(per_class=20, seed=0)
    assert list(df.columns) == ["text", "label"]
    assert df["label"].value_counts().to_dict() == {"negative": 20, "neutral": 20, "positive": 20}


def test_demo_frame_unanimous_keeps_only_tweets_several_annotators_agreed_on():
    import pandas as pd

    from explorer.data.dataset import demo_csv_path

    raw = pd.read_csv(demo_csv_path(), encoding="latin-1")
    raw["text"] = raw["text"].astype("string").str.replace(r"\s+", " ", regex=True).str.strip()
    unanimous = set(raw.loc[raw["confidence"] == 1.0, "text"].dropna())
    single = set(raw.loc[raw["confidence"].isna(), "text"].dropna()) - unanimous
    df = demo_frame(per_class=300, seed=0, min_confidence=1.0, single_annotator=False)
    assert len(df) == 900 and set(df["text"]) <= unanimous
    assert set(demo_frame(per_class=300, seed=0, min_confidence=1.0)["text"]) & single  # the flag matters


@pytest.mark.parametrize("encoding,expect", [("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig")])
def test_utf8_and_bom(encoding, expect):
    t = read_csv("text,label\ncafé au lait,pos\nbad coffee,neg\n".encode(encoding))
    assert t.encoding == expect and list(t.frame.columns) == ["text", "label"]  # BOM not in the header
    assert t.frame["text"][0] == "café au lait" and t.notes == ()


def test_non_utf8_falls_back_to_latin1_and_says_so(tmp_path):
    f = tmp_path / "l1.csv"
    f.write_bytes("text,label\ncafé crème,pos\nmauvais,neg\n".encode("latin-1"))
    t = read_csv(f)
    assert t.encoding == "latin-1" and t.frame["text"][0] == "café crème"
    assert len(t.notes) == 1 and "latin-1" in t.notes[0] and "UTF-8" in t.notes[0]


@pytest.mark.parametrize("delim", [",", ";", "\t", "|"])
def test_delimiter_sniffing_with_quoted_fields(delim):
    rows = [["text", "label"], ['he said "hi", then left; ok|fine', "a"], ["plain", "b"], ["x, y; z", "a"]]
    body = "\n".join(delim.join('"' + c.replace('"', '""') + '"' for c in r) for r in rows) + "\n"
    t = read_csv(body.encode())
    assert t.delimiter == delim
    assert t.frame["text"].tolist() == [r[0] for r in rows[1:]]


def test_column_guess_and_override():
    t = read_csv(b"id,review,stars,sentiment\n1,great stuff here,5,pos\n2,awful thing really,1,neg\n")
    assert guess_columns(t.frame) == ("review", ("sentiment",))
    assert guess_columns(t.frame, label_column="stars") == ("review", ("stars",))
    t2 = read_csv(b"a,b\nthe long sentence is here,x\nanother long sentence,y\n")
    assert guess_columns(t2.frame) == ("a", ("b",))


def test_single_label_strings_and_ints():
    d = prepare(read_csv(b"text,label\na,pos\nb,neg\nc,pos\n"))
    assert d.problem_type == ProblemType.SINGLE and d.label_names == ("neg", "pos") and d.y.tolist() == [1, 0, 1]
    d = prepare(read_csv(b"text,label\na,10\nb,2\nc,2.0\n"))
    assert d.label_names == ("2", "10") and d.y.tolist() == [1, 0, 0]  # numeric order; 2.0 is 2


@pytest.mark.parametrize("cells", [["a|b", "b", "c|a"], ["a;b", "b", "c;a"],
                                   [json.dumps(["a", "b"]), json.dumps(["b"]), json.dumps(["c", "a"])]])
def test_multi_label_in_cells(cells):
    body = "text,labels\n" + "\n".join(f"t{i},\"{c.replace(chr(34), chr(34) * 2)}\"" for i, c in enumerate(cells))
    d = prepare(read_csv(body.encode()))
    assert d.problem_type == ProblemType.MULTI and d.label_names == ("a", "b", "c")
    np.testing.assert_array_equal(d.y, [[1, 1, 0], [0, 1, 0], [1, 0, 1]])


def test_multi_label_as_01_columns():
    t = read_csv(b"text,toxic,funny\nhello there,0,1\nyou fool,1,1\nfine day,0,0\n")
    d = prepare(t)
    assert d.problem_type == ProblemType.MULTI and d.label_columns == ("toxic", "funny") and d.label_names == ("toxic", "funny")
    np.testing.assert_array_equal(d.y, [[0, 1], [1, 1], [0, 0]])


def test_float_labels_mean_regression():
    d = prepare(read_csv(b"text,score\nok,0.5\ngood,0.9\nbad,0.1\n"))
    assert d.problem_type == ProblemType.REGRESSION and d.label_names == ()
    np.testing.assert_allclose(d.y, [0.5, 0.9, 0.1])


# ---- the bad-input list ---------------------------------------------------------------

def _bad(source, match, **kw):
    with pytest.raises(DataError) as err:
        prepare(read_csv(source, **kw), **{k: v for k, v in kw.items() if k.endswith("column")})
    assert match in _one_line(err), str(err.value)


def test_empty_file():
    _bad(b"", "empty")
    _bad(b"  \n\n", "empty")


def test_header_only():
    _bad(b"text,label\n", "header but no rows")


def test_missing_column():
    with pytest.raises(DataError) as err:
        guess_columns(read_csv(b"text,label\na,b\n").frame, label_column="sentiment")
    assert "no column 'sentiment'" in _one_line(err) and "text, label" in str(err.value)


def test_binary_garbage():
    rng = np.random.default_rng(0)
    _bad(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(), "binary")
    _bad(bytes(range(1, 32)) * 200, "binary")  # no NUL bytes, still not text


def test_directory_and_missing_path(tmp_path):
    _bad(tmp_path, "is a directory")
    _bad(tmp_path / "nope.csv", "no such file")


def test_one_class():
    _bad(b"text,label\na,pos\nb,pos\n", "only one class")


def test_nan_labels():
    _bad(b"text,label\na,pos\nb,\nc,neg\n", "empty or NaN label")
    _bad(b"text,label\na,pos\nb,NaN\nc,neg\n", "empty or NaN label")


def test_huge_cell():
    _bad(("text,label\n\"" + "word " * 20_000 + "\",a\nshort,b\n").encode(), "20,000 words")


def test_row_and_size_limits():
    body = "text,label\n" + "".join(f"t{i},{i % 2}\n" for i in range(50))
    _bad(body.encode(), "more than 10 rows", max_rows=10)
    _bad(body.encode(), "the limit is", max_bytes=100)


def test_utf16_is_named():
    _bad("text,label\na,b\n".encode("utf-16"), "UTF-16")


def test_the_demo_csv_is_built_once_per_size():
    """The Data page asks for the demo tweets on every run, ~0.8 s of pandas each time: built once."""
    from explorer.data.dataset import demo_csv

    assert demo_csv(20) is demo_csv(20) and demo_csv(20, permuted=True) is not demo_csv(20)
