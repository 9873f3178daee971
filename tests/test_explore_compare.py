"""Compare page: every head on one encoder pass, parity with a full analysis, AppTest."""
import numpy as np

from explorer.explain import compare
from explorer.model.analysis import analyze
from explorer.model.heads import HEAD_KINDS, build_head

from explore_helpers import TEXT, open_page, specs, values


def test_compare_matches_each_heads_own_analysis(tiny):
    ck = tiny["distilbert"]
    heads = {k: build_head(ck, k) for k in HEAD_KINDS}
    a = analyze(ck, heads["distilbert"], TEXT)
    results = compare.compare_heads(a.hidden_states[-1], heads, labels=a.labels, ptype=a.problem_type)
    assert [r.kind for r in results] == list(HEAD_KINDS)
    for r in results:
        np.testing.assert_allclose(r.logits, analyze(ck, heads[r.kind], TEXT).logits, atol=1e-5)
        assert bool(r.new_parameters) == (r.kind != "distilbert")  # only the own head is trained
    assert np.isclose(results[0].probs.sum(), 1.0)


def test_compare_page_apptest():
    at = open_page("compare")
    s = specs(at)
    assert len(s) == 2 and not at.error
    names = [d["name"] for d in s[0]["data"]]
    assert names[0] == "bert (own) ✓" and all("✓" not in n for n in names[1:])
    assert len(names) == len(HEAD_KINDS)
    assert "roberta" in at.warning[0].value
    for d in s[1]["data"]:
        assert abs(values(d["y"]).sum() - 1) < 1e-6  # softmax per head
    at.session_state["checkpoint"] = "minilm"
    at.run()
    assert not at.exception and "bert" in at.warning[0].value
