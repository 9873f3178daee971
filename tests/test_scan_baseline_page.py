"""The Scan page against a baseline checkpoint (AppTest, English and Vietnamese): the "compare with" picker, the
McNemar line in plain words, the disagreement table with fixes and regressions first, a row opening on the Logits
page with the scanned checkpoint and a note of the baseline's prediction, and "compare with the checkpoint it
started from" for a model fine-tuned in the session."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.text import i18n
from tests.baseline_models import frame, side_by_side_of, spread_models
from tests.conftest import ROOT
from tests.explore_helpers import give_csv
from tests.test_vi_pages import english_left, shown

HEADING = {"en": "Against the baseline", "vi": "So với mốc"}
KINDS = {"en": ("fix", "regression"), "vi": ("sửa đúng", "làm sai đi")}


def _page(models: dict, lang: str, baseline: str | None = None, origins: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    at.session_state["checkpoint"] = "other…"
    at.session_state["checkpoint_other"] = str(models["b"])
    if baseline is not None:
        at.session_state["scan_baseline"] = "other…"
        at.session_state["scan_baseline_other"] = baseline
    if origins:
        at.session_state["scan_origins"] = origins
    give_csv(at, frame(60).to_csv(index=False).encode(), "rows.csv")
    at.run()
    at.switch_page("pages/scan.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_comparison_reads_in_plain_words_and_opens_a_row_on_logits(tiny_root, lang):
    models = spread_models(tiny_root)
    at = _page(models, lang, baseline=str(models["a"]))
    at.button(key="scan_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(h.value.startswith(HEADING[lang]) for h in at.subheader)
    verdict = [m.value for m in list(at.success) + list(at.info) + list(at.error) if "McNemar p =" in m.value]
    assert len(verdict) == 1 and str(models["b"]) in verdict[0]
    table = next(d.value for d in at.dataframe if d.value.shape[1] == 8)  # row, text, A, p, B, p, given, kind
    kinds = list(table.iloc[:, 7])
    first = [k for k in kinds if k in KINDS[lang]]
    assert first and kinds[:len(first)] == first  # fixes and regressions first
    assert table.iloc[:, 3].between(0, 1).all() and table.iloc[:, 5].between(0, 1).all()
    row = int(table.iloc[0, 0])
    at.selectbox(key="scan_baseline_row").set_value(row).run()
    at.button(key="scan_baseline_open").click().run()
    assert not at.exception, at.exception
    assert at.session_state["text"] == table.iloc[0, 1]
    note = [i.value for i in at.info if str(models["a"]) in i.value]
    assert note and table.iloc[0, 2] in note[0]  # the baseline's prediction, on the page of the scanned one
    # both checkpoints' numbers on the row's text, beside each other, as the library reads them (its parity with
    # transformers is tests/test_scan_baseline.py::test_side_by_side_reads_each_checkpoint_as_transformers_does)
    side = next(d.value for d in at.dataframe if f"{models['a']}: logit" in d.value.columns)
    want = side_by_side_of(models, table.iloc[0, 1])
    for name, key in ((want.checkpoint, ""), (want.baseline, "baseline_")):
        column = lambda what, name=name: side[i18n.t(f"side_by_side.{what}", lang, name=name)]  # noqa: E731
        assert list(column("label")) == [r[key + "label"] for r in want.rows()]
        assert list(column("logit")) == [f"{r[key + 'logit']:.4f}" for r in want.rows()]
        assert list(column("score")) == [f"{r[key + 'score']:.4f}" for r in want.rows()]
    if lang == "vi":
        assert english_left(shown(at)) == []  # the Logits page with both checkpoints
    # the Logits page's pick is its own: putting it down there leaves the Scan page's pick and report as they were
    at.session_state["logits_baseline"] = ""
    at.switch_page("pages/logits.py").run()  # AppTest reruns the page it last ran itself: the Scan page
    assert not at.dataframe and any(i18n.t("side_by_side.intro", lang) in c.value for c in at.caption)
    at.switch_page("pages/scan.py").run()
    assert at.session_state["scan_baseline_other"] == str(models["a"])
    assert any(h.value.startswith(HEADING[lang]) for h in at.subheader)
    if lang == "vi":
        assert english_left(shown(at)) == []


def test_compare_with_the_checkpoint_it_started_from(tiny_root):
    models = spread_models(tiny_root)
    at = _page(models, "en", origins={str(models["b"]): str(models["renamed"])})
    at.button(key="scan_baseline_origin").click().run()
    assert at.session_state["scan_baseline"] == str(models["renamed"])
    at.button(key="scan_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(h.value.startswith(HEADING["en"]) for h in at.subheader)
    # a renamed id2label between the two: the major finding names the mapping
    assert any("renaming" in e.label for e in at.expander)


def test_a_baseline_with_other_labels_is_one_line_on_the_page(tiny_root):
    models = spread_models(tiny_root)
    at = _page(models, "en", baseline="minilm")  # the encoder alone: two labels, against three
    at.button(key="scan_run").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "same number of labels" in at.error[0].value


def test_after_a_fine_tune_compare_with_the_checkpoint_it_started_from(tiny_root):
    from explorer.ui.running import HELD
    from explorer.ui.views.finetune import FINETUNE

    models = spread_models(tiny_root)
    at = _page(models, "en")
    at.switch_page("pages/finetune.py").run()
    at.number_input(key="ft_epochs_head").set_value(1).run()
    at.button(key="ft_start").click().run()
    job = at.session_state[HELD.format(FINETUNE)][1]
    assert job.wait(120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.button(key="ft_compare_origin").click().run()  # the fine-tune's result: compare with where it started
    assert not at.exception, at.exception
    assert at.session_state["checkpoint"] == job.name and at.session_state["scan_baseline"] == str(models["b"])
    at.switch_page("pages/scan.py").run()  # AppTest stays on the page it ran: switch_page's landing, as a browser
    at.button(key="scan_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(h.value == f"{HEADING['en']} {models['b']}" for h in at.subheader)


def test_next_to_a_checkpoint_that_cannot_be_read_is_one_line_on_the_logits_page(tiny_root, token_checkpoint, tmp_path):
    """The Logits page's "next to another checkpoint" with a baseline it cannot read beside the sidebar's: a token
    classifier, another number of labels, a folder that is not there, one outside the allowed roots. Each is one
    error line in the expander, the rest of the page drawn; no pick is an invitation, not an error."""
    models = spread_models(tiny_root)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["checkpoint"] = "other…"
    at.session_state["checkpoint_other"] = str(models["b"])
    at.run()
    at.switch_page("pages/logits.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(i18n.t("side_by_side.intro", "en") in c.value for c in at.caption)
    said = {}
    for case, folder in (("token", str(token_checkpoint)), ("labels", "minilm"), ("missing", str(tiny_root / "nope")),
                         ("outside", str(outside))):
        at.session_state["logits_baseline"] = "other…" if case != "labels" else folder
        at.session_state["logits_baseline_other"] = folder
        at.run()
        assert not at.exception, (case, at.exception)
        said[case] = [e.value for e in at.error]
        assert len(said[case]) == 1 and "\n" not in said[case][0] and "Traceback" not in said[case][0], (case, said)
        assert any(h.value == i18n.t("logits.loss_title", "en") for h in at.subheader), case  # the page goes on
    assert "same number of labels" in said["labels"][0]
    assert len(set(map(tuple, said.values()))) == 4  # each says its own reason
