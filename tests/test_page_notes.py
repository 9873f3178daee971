"""What a page says beside its results: the Label audit's all-clear line on clean data and its folds input that
logs no Streamlit warning; Compare heads' untrained-heads warning above the numbers it qualifies (AppTest)."""
import json
from types import SimpleNamespace

import numpy as np
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from explorer.text import i18n


def _in_order(node) -> list:
    """Every element under `node`, in the order the page draws them."""
    children = getattr(node, "children", None)
    if not children:
        return [node]
    return [e for key in sorted(children) for e in _in_order(children[key])]


def _clean_audit(n: int):
    return SimpleNamespace(summary=lambda: {"flagged": 0, "estimated_noise_rate": 0.0, "cv_accuracy": 1.0},
                           notes=(), data=SimpleNamespace(texts=["a"] * n), features="pooled",
                           flagged=np.array([], int))


def _draw_clean_summary(n: int = 12):
    from tests.test_page_notes import _clean_audit
    from explorer.ui.views.audit import draw_audit_summary

    draw_audit_summary(_clean_audit(n))


def test_the_audit_says_all_clear_when_nothing_is_flagged():
    at = AppTest.from_function(_draw_clean_summary, default_timeout=60).run()
    assert not at.exception
    assert [s.value for s in at.success] == [i18n.n("audit.all_clear", 12, "en")]
    assert "12" in at.success[0].value


def test_the_audit_folds_input_logs_no_warning(caplog, monkeypatch):
    from streamlit.elements.lib import policies

    monkeypatch.setattr(policies._LOGGER, "propagate", True)  # streamlit's loggers write to their own handler
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/audit.py").run()
    at.run()  # the rerun re-assigns the kept value through session state: where the warning came from
    assert not at.exception and at.number_input(key="audit_folds").value == 5
    assert not [r for r in caplog.records if "audit_folds" in r.getMessage()]


def test_compare_heads_warns_about_untrained_heads_first():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception and at.warning, "the default checkpoint has heads with new weights"
    kinds = [type(e).__name__ for e in _in_order(at.main)]
    assert kinds.index("Warning") < kinds.index("Dataframe"), kinds


def test_pages_that_wait_for_a_click_show_what_will_come():
    """Label audit, Dataset explanations and Fine-tune, before anything has run: an example chart, titled as
    an example, under a line saying its numbers are made up; gone once there is a result (Fine-tune: a job)."""
    from explore_helpers import open_page

    for page, key in (("audit", "example.audit_title"), ("explain_data", "example.explain_title"),
                      ("finetune", "example.finetune_title")):
        at = open_page(page)
        assert not at.exception and not at.error, page
        titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
        assert i18n.t(key, "en") in titles, page
        assert i18n.t("example.note", "en") in [c.value for c in at.caption], page
