"""The Data page with token data: a CoNLL upload gets the tag checks, not the sentence label
report; a sentence checkpoint given it is one error line."""
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from explorer.ui.session import Upload

CONLL = b"alice B-PER\nlives O\nin O\nparis B-LOC\n\nbob O\nsmith I-PER\nis O\nhere O\n"


def test_data_page_checks_the_tags_of_a_conll_upload():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["data_source"] = "upload"
    at.session_state["data_uploaded"] = Upload(CONLL, "ner.conll")
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    (err,) = at.error  # the default checkpoint classifies sentences
    assert "sentence classifier" in err.value and "\n" not in err.value
    at.checkbox(key="data_compare").uncheck().run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Sentences": "2", "Words": "8", "Tag scheme": "IOB2"}
    warnings = " ".join(w.value for w in at.warning)
    assert "Invalid tag sequences" in warnings and "I-PER after O" in warnings
    assert any("first subword" in i.value for i in at.info)
    assert at.dataframe[0].value.iloc[0].tolist() == [2, 2, "I-PER", "O"]
    keys = {s.key for s in at.selectbox}
    assert "data_text_column" not in keys and "data_label_column" not in keys  # not sentence data


def test_data_page_tag_checks_in_vietnamese():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = "vi"
    at.session_state["data_source"] = "upload"
    at.session_state["data_uploaded"] = Upload(CONLL, "ner.conll")
    at.session_state["data_compare"] = False
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error
    assert {m.label for m in at.metric} == {"Số câu", "Số từ", "Lược đồ tag"}
    warnings = " ".join(w.value for w in at.warning)
    assert "Chuỗi tag không hợp lệ" in warnings and "vi phạm lược đồ IOB2" in warnings
    assert any("subword đầu tiên" in i.value for i in at.info)
