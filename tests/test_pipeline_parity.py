"""What pipeline() says, for every problem type: `analyze`'s `pipeline` block against
transformers.pipeline("text-classification", top_k=None), honest predictions (no label when no sigmoid
passes 0.5; a regression's value), and the Logits page showing a one-output head's two readings."""
import json

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, pipeline

from explorer.cli import main
from explorer.model.checkpoints import embedded_encoder_dir
from explorer.text.i18n import t

from explore_helpers import open_page

TEXT = "A quiet, surprising little film."
LABELS = ("joy", "anger", "fear")
# name -> (num_labels, problem_type, classifier bias): the bias puts each head where its case lives
# (every sigmoid under 0.5; a one-output logit far from 0, where its sigmoid and raw value part).
KINDS = {
    "pipe-single": (3, "single_label_classification", 0.0),
    "pipe-multi-none": (3, "multi_label_classification", -6.0),
    "pipe-regression": (1, "regression", 1.0),
    "pipe-one-output": (1, None, 1.0),
}


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(embedded_encoder_dir()))


@pytest.fixture(scope="module")
def pipe_root(tiny_root, tokenizer):
    """The four checkpoints, saved under the tests' models root so `analyze --checkpoint DIR` loads them."""
    tok = tokenizer
    for name, (n, ptype, bias) in KINDS.items():
        labels = LABELS[:n] if n > 1 else ("LABEL_0",)
        cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                         num_labels=n, id2label=dict(enumerate(labels)), label2id={v: k for k, v in enumerate(labels)})
        if ptype:
            cfg.problem_type = ptype
        torch.manual_seed(3)
        model = BertForSequenceClassification(cfg)
        with torch.no_grad():
            model.classifier.bias.fill_(bias)
        model.save_pretrained(tiny_root / name)
        tok.save_pretrained(tiny_root / name)
    return tiny_root


def _analyze(capsys, path) -> dict:
    assert main(["analyze", "--checkpoint", str(path), "--text", TEXT, "--json", "--device", "cpu"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", list(KINDS))
def test_pipeline_scores_equal_transformers(capsys, pipe_root, name):
    d = _analyze(capsys, pipe_root / name)
    hf = pipeline("text-classification", model=str(pipe_root / name), top_k=None, device="cpu")([TEXT])[0]
    want = {r["label"]: r["score"] for r in hf}
    assert d["pipeline"]["scores"].keys() == want.keys()
    np.testing.assert_allclose([d["pipeline"]["scores"][k] for k in want], list(want.values()), atol=1e-6, rtol=0)
    expected = {"pipe-single": "softmax", "pipe-multi-none": "sigmoid", "pipe-regression": "none",
                "pipe-one-output": "sigmoid"}[name]
    assert d["pipeline"]["function"] == expected


def test_multi_label_with_no_sigmoid_over_half_predicts_none(capsys, pipe_root):
    d = _analyze(capsys, pipe_root / "pipe-multi-none")
    assert max(d["sigmoid"]) < 0.5 and d["predicted"] == []
    main(["analyze", "--checkpoint", str(pipe_root / "pipe-multi-none"), "--text", TEXT, "--device", "cpu"])
    out = capsys.readouterr().out.splitlines()
    assert "predicted: none" in out
    layers = next(x for x in out if x.startswith("predicted with the head on each")).split(": ", 1)[1]
    # Each layer's read-out is "none" or labels over 0.5, never the top label by default.
    sig = 1 / (1 + np.exp(-np.asarray(d["layer_logits"])))
    for k, row in enumerate(sig):
        want = "|".join(LABELS[i] for i in np.flatnonzero(row > 0.5)) or "none"
        assert f"{k}: {want}" in layers.split(", ")


@pytest.mark.parametrize("name", ["pipe-regression", "pipe-one-output"])
def test_regression_prediction_is_its_value(capsys, pipe_root, name):
    d = _analyze(capsys, pipe_root / name)
    assert d["problem_type"] == "regression"  # HF's loss rule: num_labels == 1 with no problem_type
    assert isinstance(d["predicted"], float) and d["predicted"] == pytest.approx(d["logits"][0], abs=1e-6)
    main(["analyze", "--checkpoint", str(pipe_root / name), "--text", TEXT, "--device", "cpu"])
    out = capsys.readouterr().out
    assert f"predicted: {d['logits'][0]:.4f}" in out and "LABEL_0" not in out.split("predicted:", 1)[1]
    # pipeline() reads a one-output head without problem_type through a sigmoid; the summary says so.
    assert ("pipeline() returns the sigmoid" in out) == (name == "pipe-one-output")


def test_logits_page_shows_raw_value_and_pipeline_sigmoid(capsys, pipe_root):
    d = _analyze(capsys, pipe_root / "pipe-one-output")
    raw, sig = d["logits"][0], d["pipeline"]["scores"]["LABEL_0"]
    at = open_page("logits", checkpoint=str(pipe_root / "pipe-one-output"), text=TEXT)
    assert not at.error
    shown = {m.label: m.value for m in at.metric}
    own = t("pipeline.own_metric", "en", label="LABEL_0", function=t("pipeline.fn_none", "en"), loss="MSELoss")
    pipe = t("pipeline.pipe_metric", "en", label="LABEL_0", function="sigmoid")
    assert shown[own] == f"{raw:.4f}" and shown[pipe] == f"{sig:.4f}", shown
    assert any('pipeline("text-classification")' in c.value and "MSELoss" in c.value for c in at.caption)


@pytest.mark.parametrize("name", ["pipe-one-output", "pipe-multi-none"])
def test_home_page_prediction_is_honest(capsys, pipe_root, name):
    d = _analyze(capsys, pipe_root / name)
    at = open_page("home", checkpoint=str(pipe_root / name), text=TEXT)
    pred = next(m.value for m in at.metric if m.label == t("home.prediction", "en"))
    pred = pred.replace("\\", "")  # Markdown-escaped
    assert pred == (f"{d['logits'][0]:.4f}" if name == "pipe-one-output" else t("pipeline.none", "en"))
    # pipeline()'s sigmoid beside the raw value only where the two rules differ.
    assert any('pipeline("text-classification")' in c.value for c in at.caption) == (name == "pipe-one-output")


# ---- precision per dtype ----------------------------------------------------------------------
# The analysis loads a checkpoint in its own dtype with eager attention (attention maps need it), while
# HF's default is sdpa: in float32 the two agree to 1e-5; in fp16 and bf16 the analysis equals HF's
# eager model and differs from sdpa's by its summation order (docs/guide.md states the figures).
PRECISION_TEXT = "A quiet, surprising little film that stays with you long after the credits roll."


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_analysis_logits_per_dtype(tiny_root, tokenizer, dtype, record_property):
    from transformers import AutoModelForSequenceClassification

    from explorer.model.analysis import analyze
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head

    # The real MiniLM-L6 encoder (magnitudes like a real checkpoint's) with a seeded 3-label head.
    folder = tiny_root / f"precision-{str(dtype).split('.')[1]}"
    tok = tokenizer
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(str(embedded_encoder_dir()), num_labels=3)
    model.to(dtype).save_pretrained(folder)
    tok.save_pretrained(folder)
    ck = load_checkpoint(str(folder), device="cpu")
    assert ck.model.dtype == dtype  # analysed in the checkpoint's own dtype, as HF loads it
    own = analyze(ck, build_head(ck, "own"), PRECISION_TEXT).logits
    enc = tok(PRECISION_TEXT, return_tensors="pt")
    hf = {}
    for impl in ("sdpa", "eager"):
        m = AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation=impl).eval()
        assert m.dtype == dtype
        with torch.inference_mode():
            hf[impl] = m(**enc).logits[0].float().numpy().astype(np.float64)
    vs_sdpa, vs_eager = float(np.abs(own - hf["sdpa"]).max()), float(np.abs(own - hf["eager"]).max())
    record_property("max_abs_vs_sdpa", vs_sdpa)
    print(f"{dtype}: analysis vs HF eager {vs_eager:.2e}, vs HF default (sdpa) {vs_sdpa:.2e}")
    if dtype == torch.float32:
        assert vs_sdpa <= 1e-5 and vs_eager <= 1e-5
    else:  # the same kernels as HF's eager model: equal up to float32 printing of half values
        assert vs_eager <= 1e-6
        assert vs_sdpa <= 5e-3  # sdpa's other summation order, a few half-precision steps at most


def test_dropout_page_claims_no_label_agreement_for_a_value(pipe_root):
    at = open_page("dropout", checkpoint=str(pipe_root / "pipe-one-output"), text=TEXT)
    assert not at.error
    agree = t("dropout.agree", "en", share="").strip()
    assert not any(agree in c.value for c in at.caption)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("ptype", [None, "single_label_classification", "multi_label_classification", "regression"])
def test_pipeline_rule_is_postprocess_default_for_every_config(n, ptype, tokenizer):
    """Every (num_labels, problem_type) pair through TextClassificationPipeline.postprocess itself."""
    from transformers import TextClassificationPipeline

    from explorer.model import problem as P

    cfg = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8,
                     num_labels=n)
    cfg.problem_type = ptype
    pipe = TextClassificationPipeline(model=BertForSequenceClassification(cfg).eval(),
                                      tokenizer=tokenizer)
    logits = np.array([1.015, -0.4, 2.2][:n], dtype=np.float32)
    hf = pipe.postprocess({"logits": torch.tensor(logits)[None]}, top_k=None, _legacy=False)
    fn = P.pipeline_rule(cfg)
    got = dict(zip(pipe.model.config.id2label.values(), P.pipeline_scores(logits.astype(np.float64), fn)))
    assert sorted(got) == sorted(r["label"] for r in hf)
    for r in hf:
        assert r["score"] == pytest.approx(got[r["label"]], abs=1e-6), (fn, r)


def test_handout_reads_a_multi_label_head_by_its_own_rule(pipe_root):
    import explorer
    from explorer.teach.handout import handout_html

    a = explorer.analyze(explorer.load(str(pipe_root / "pipe-multi-none"), device="cpu"), TEXT)
    keys = ("title", "text", "checkpoint", "head", "prediction", "tokens", "label")
    doc = handout_html(a, [], {**{k: k.capitalize() for k in keys}, "none": "none"})
    assert "<b>Prediction:</b> none</p>" in doc
    # the probabilities chart (the lesson's own figure) is read by the head's own rule: the sigmoid, not a softmax
    assert "encoder.kind_sigmoid" in doc and "encoder.kind_softmax" not in doc
