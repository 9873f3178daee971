"""Every Explore page works for every head kind on both embedded checkpoints, in both languages."""
import pytest

from explorer.model.heads import KINDS

from explore_helpers import open_page, specs

PAGES = ("tokens", "pooled", "dropout", "logits", "compare")


@pytest.mark.parametrize("name", PAGES)
def test_page_for_every_head_and_checkpoint(name):
    at = open_page(name)
    n_charts, english = len(specs(at)), at.title[0].value
    assert n_charts >= 2
    for ck in ("minilm", "minilm-sentiment"):
        for kind in KINDS:
            at.session_state["checkpoint"], at.session_state["head"] = ck, kind
            at.run()
            assert not at.exception and not at.error, (ck, kind, at.exception or at.error)
            assert len(specs(at)) == n_charts, (ck, kind)
    at.session_state["lang"] = "vi"
    at.run()
    assert not at.exception and at.title[0].value != english  # the page speaks Vietnamese


@pytest.mark.parametrize("name", PAGES)
def test_empty_text_is_one_error_line(name):
    at = open_page(name, text="   ")
    assert not at.exception and len(at.error) == 1 and "empty" in at.error[0].value
