"""A Label audit row opened in Attributions: the CSV's label as the Data page maps it to the checkpoint,
and a note that stays on the page when no label fits (a score on a classifier)."""
from explore_helpers import open_page
from explorer.data.mapping import checkpoint_target


def _opened(sentiment, value, ptype):
    at = open_page("home")
    at.session_state["attr_target_label"] = checkpoint_target(value, ptype, sentiment)
    at.switch_page("pages/attributions.py").run()
    assert not at.exception and not at.error
    return at


def test_label_id_opens_the_mapped_label(sentiment):
    at = _opened(sentiment, "0", "single_label_classification")
    assert at.selectbox(key="attr_target").value == 0  # negative, not "no label '0'"
    assert any("'0' is the checkpoint's 'negative'" in i.value for i in at.info)


def test_score_says_why_it_explains_the_prediction(sentiment):
    at = _opened(sentiment, 0.9, "regression")
    assert at.selectbox(key="attr_target").value == -1
    notes = [i.value for i in at.info]  # still there after the attribution's own rerun
    assert any("is a score (0.9)" in n and "predicted label is explained instead" in n for n in notes)
    assert any(c.value.startswith("Explaining the") for c in at.caption)  # the attribution ran and reran


def test_a_row_of_permuted_data_explains_the_class_the_data_page_mapped_it_to(sentiment):
    """The Data page found "CSV positive = checkpoint neutral" on the permuted demo, yet a row
    opened from the audit explained the checkpoint's own "positive", with no note."""
    from explorer.ui.session import DATA_KEY

    at = open_page("data")
    at.number_input(key="data_per_class").set_value(10).run()
    at.checkbox(key="data_permute").check().run()
    assert not at.exception and not at.error
    src = at.session_state[DATA_KEY]
    permuted = src.mapping_for("minilm-sentiment")
    assert permuted and permuted["positive"] != "positive", permuted  # found: the demo's names are rotated
    assert src.mapping_for("minilm") is None  # found against the sidebar's checkpoint only
    at.session_state["attr_target_label"] = checkpoint_target("positive", "single_label_classification", sentiment,
                                                              permuted)
    at.switch_page("pages/attributions.py").run()
    assert not at.exception and not at.error
    mapped = permuted["positive"]
    assert at.selectbox(key="attr_target").value == sentiment.labels.index(mapped)
    assert any(f"predicts the CSV's 'positive' as '{mapped}'" in i.value for i in at.info), [i.value for i in at.info]
    assert any(c.value.startswith(f"Explaining the logit of '{mapped}'") for c in at.caption)
