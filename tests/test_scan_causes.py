"""The scan names a cause before its symptoms and stays quiet where nothing is wrong: a head saved untrained is
one major finding with everything it explains folded under it; clean, accurate models on clean rows get no major
and no shortcut; a planted word that turns rows against their labels is a major shortcut."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.model.checkpoints import load_checkpoint
from explorer.scan import scan_rows
from tests import scan_causes_models, scan_models


@pytest.fixture(scope="module")
def causes(tiny_root, tmp_path_factory):
    from tests.conftest import _trained_once
    root = _trained_once(scan_causes_models, "scan-causes", tiny_root, tmp_path_factory)
    planted = _trained_once(scan_models, "scan-planted", tiny_root, tmp_path_factory)
    return {"untrained": load_checkpoint(str(root / "untrained")), "flibbet": load_checkpoint(str(root / "flibbet")),
            "topic": load_checkpoint(str(planted / "topic"))}


def majors(report) -> list[str]:
    return [f.check for f in report.findings if f.severity == "major"]


@pytest.mark.slow
def test_a_head_saved_untrained_is_one_major_cause_with_its_symptoms_under_it(causes):
    ck = causes["untrained"]
    assert not ck.new_weights  # every weight is in the files: nothing at load says the head is random
    df = scan_models.topic_frame(90, seed=7)
    r = scan_rows(ck, df["text"].tolist(), df["label"].tolist())
    assert majors(r) == ["head.untrained"], [(f.check, f.severity, f.because) for f in r.findings]
    cause = r.findings[0].to_dict()
    assert cause["bias_zero"] and abs(cause["weight_std"] - 0.02) < 0.003
    assert cause["mean_top_probability"] < 0.5  # near uniform over three labels
    below = [f for f in r.findings if f.because]
    assert all(f.because == "head.untrained" and f.severity != "major" for f in below)
    assert not [f for f in r.findings if f.check == "mapping.permutation"]  # a random head's "mapping" is noise


@pytest.mark.slow
def test_a_trained_head_is_not_called_untrained(causes):
    df = scan_models.topic_frame(30, seed=7)
    for name in ("topic", "flibbet"):
        r = scan_rows(causes[name], df["text"].tolist(), None, checks=["head"])
        assert not [f for f in r.findings if f.check == "head.untrained"], name
