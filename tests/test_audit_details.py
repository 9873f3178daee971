"""Label audit details: the features named in full, one quality column where P(given label) is the
same number, regression suggestions rounded like the given values, a report in words with plurals."""
import numpy as np
import pytest

from explorer.data.audit import audit
from explorer.data.audit_export import report_html
from explorer.data.dataset import prepare, read_csv
from test_audit import FLIPPED, planted


def _scores():
    df = planted()
    df["label"] = (np.where(df["label"] == "positive", 0.9, 0.1) + np.linspace(-0.05, 0.05, len(df))).round(3)
    return df


@pytest.fixture(scope="module")
def single(minilm):
    return audit(minilm, prepare(read_csv(planted().to_csv(index=False).encode())), folds=3)


def test_single_label_quality_is_p_given_so_one_column(single):
    np.testing.assert_allclose(single.quality, single.p_given, atol=1e-6)  # why one column is enough
    html = report_html(single, set(FLIPPED[:1]), "planted.csv")
    assert "P(given label)" not in html and "quality" in html.lower()


def test_report_names_the_features_in_words_with_plurals(single):
    html = report_html(single, {FLIPPED[0]}, "planted.csv")
    pool = {"first": "first token", "mean": "mean (L2)", "layers": "every layer's mean"}[single.features]
    assert f"features “{pool}”" in html.replace("&#x27;", "'") and f"on {single.features} features" not in html
    assert "1 suggestion accepted" in html and "96 rows" in html
    assert "2 suggestions accepted" in report_html(single, set(FLIPPED[:2]), "planted.csv")
    vi = report_html(single, {FLIPPED[0]}, "planted.csv", lang="vi")
    assert "đã chấp nhận 1 gợi ý" in vi


def test_regression_suggestions_keep_the_given_decimals(minilm):
    found = audit(minilm, prepare(read_csv(_scores().to_csv(index=False).encode())), folds=3)
    assert found.decimals == 3
    values = [found.suggested(r) for r in range(len(found.data.texts))]
    assert all(v == round(v, 3) for v in values) and any(v != round(v, 2) for v in values)
    assert all(i["suggested"] == round(i["suggested"], 3) for i in found.issues())
