"""The pipeline page in a real browser: typing a new text updates tokens and prediction."""
from tests.conftest import commit, sidebar_text, wait_idle

METRIC = "[data-testid=stMetricValue]"


def _type_text(page, text: str, box: int = 0) -> None:
    """Type into the sidebar's text (box 0) or text B (box 1)."""
    commit(sidebar_text(page, "app.text" if box == 0 else "arch.text_b"), text)


def _main_text(page) -> str:
    return page.locator("[data-testid=stMain]").inner_text()


def test_new_text_updates_tokens_and_prediction(page):
    # The first session on a fresh server runs app.py through Streamlit's legacy pages/ mode,
    # and that session's reruns lose the sidebar (see test_app.py::test_rerun_keeps_the_sidebar).
    # A reload starts a session on the st.navigation path, which is what every later visitor gets.
    page.reload()
    wait_idle(page)
    assert page.locator(METRIC).first.inner_text().strip() == "positive"
    _type_text(page, "I hate this, it is awful and I am angry.")
    main = _main_text(page)
    assert "awful" in main and "angry" in main
    assert "wonderful" not in main  # the default text's tokens are gone
    assert page.locator(METRIC).first.inner_text().strip() == "negative"
    # the sidebar survives the rerun, and a second edit still takes effect
    _type_text(page, "An okay film about trains.")
    assert "trains" in _main_text(page) and "awful" not in _main_text(page)
    assert page.locator(METRIC).first.inner_text().strip() in ("negative", "neutral", "positive")


def test_text_b_makes_a_sentence_pair(page):
    page.reload()
    wait_idle(page)
    _type_text(page, "Someone performs music.", box=1)
    assert "[SEP]" in _main_text(page) and "music" in _main_text(page)
    page.locator("[data-testid=stSidebarNav] a[href$='/attention']").first.click()
    page.wait_for_url("**/attention")
    wait_idle(page)
    # the tokens page marks where text B starts on its charts, and the sidebar kept text B
    assert page.locator("svg text", has_text="text B ▸").count() >= 3
    assert sidebar_text(page, "arch.text_b").input_value() \
        == "Someone performs music."
