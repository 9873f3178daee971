"""Token-classification checkpoints: the own head on every token equals HF's logits on every architecture
with a token class; entities equal pipeline("token-classification") for every aggregation strategy on a model
trained here; token attributions are complete; wrong-task requests get one line."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import pipeline

from explorer.cli import main
from explorer.explain.attribution import AttributionError, attribute
from explorer.explain.token_attribution import every_label
from explorer.model.analysis import AnalysisError, analyze
from explorer.model.checkpoints import TEXT_CLASSIFICATION, TOKEN_CLASSIFICATION, load_checkpoint
from explorer.model.heads import HeadError, build_head, kinds_for
from explorer.model.token_analysis import AGGREGATIONS, analyze_tokens, entities
from tests import token_model
from tests.tiny_archs import save

TOKEN_ARCHS = ("bert", "roberta", "deberta-v2", "electra", "distilbert", "llama")
TEXT = "Paris is lovely, said John Smithson of Acme Corporation."
# Names the model never saw, split into subwords its tags disagree on: first/average/max differ there.
SENTENCES = ("Maria Kowalczyk visited Hanoi last week.", "Yesterday Linh met Sarah Brightwater.",
             "Globex opened an office in Buenos Aires.", "Ngozi Adebayo works for Vinacapital in Lagos.",
             "John Smithson left Acme Corporation.", "The weather in Reykjavik is cold.")


@pytest.fixture(scope="module")
def token_archs(tiny_root):
    root = tiny_root / "token-archs"
    return {a: load_checkpoint(str(save(a, root, token=True))) for a in TOKEN_ARCHS}


@pytest.fixture(scope="module")
def ner(token_checkpoint):
    return load_checkpoint(str(token_checkpoint))


@pytest.fixture(scope="module")
def ner_pipeline(token_checkpoint):
    return pipeline("token-classification", model=str(token_checkpoint))


def _hf(ck, text: str):
    with torch.inference_mode():
        out = ck.model(**{k: v for k, v in ck.tokenizer(text, return_tensors="pt").items()},
                       output_hidden_states=True)
    return out.logits[0].numpy(), out.hidden_states


@pytest.mark.parametrize("arch", TOKEN_ARCHS)
def test_own_token_head_equals_hf_logits(token_archs, arch):
    ck = token_archs[arch]
    assert ck.task == TOKEN_CLASSIFICATION
    head = build_head(ck)
    assert [s.op for s in head.steps][0] == "token" and head.steps[-1].op == "linear"
    a = analyze_tokens(ck, head, TEXT)
    logits, hidden = _hf(ck, TEXT)
    assert a.logits.shape == logits.shape == (len(a.tokens), 3)
    np.testing.assert_allclose(a.logits, logits, atol=1e-5)
    assert a.tags == tuple(ck.labels[i] for i in logits.argmax(-1))
    np.testing.assert_allclose(a.softmax.sum(-1), 1.0, atol=1e-6)
    # the head on every layer: the model's own classifier on that layer's hidden state, for every token
    assert a.layer_logits.shape[:2] == (len(hidden), len(a.tokens))
    out_layer = ck.model.get_submodule(head.steps[-1].slot)
    with torch.inference_mode():
        for k in (0, 1):
            np.testing.assert_allclose(a.layer_logits[k], out_layer(hidden[k][0]).numpy(), atol=1e-5)


def test_sequence_checkpoints_still_load_as_sentence_classifiers(tiny):
    assert tiny["bert"].task == TEXT_CLASSIFICATION and kinds_for(tiny["bert"])[1] == "bert"


def _same(got, want) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert {k: v for k, v in g.items() if k != "score"} == {k: v for k, v in w.items() if k != "score"}
        assert abs(g["score"] - float(w["score"])) <= 1e-5


@pytest.mark.parametrize("strategy", AGGREGATIONS)
@pytest.mark.slow
def test_entities_equal_pipeline(ner, ner_pipeline, strategy):
    head = build_head(ner)
    differs = 0
    for text in SENTENCES:
        a = analyze_tokens(ner, head, text, aggregation=strategy, strategies=AGGREGATIONS)
        want = ner_pipeline(text, aggregation_strategy=strategy)
        _same([e.to_dict() for e in a.grouped()], want)
        # grouped later from an analysis of another strategy: the same, without the model
        later = analyze_tokens(ner, head, text, aggregation="none" if strategy != "none" else "simple")
        assert strategy not in later.entities and entities(ner, later, strategy) == a.entities[strategy]
        differs += a.entities["first"] != a.entities["max"] or a.entities["first"] != a.entities["average"]
    assert any(e.to_dict()["word"] for e in a.grouped()) or strategy == "none"
    # the trained model does disagree within words on these names, so the strategies are told apart
    assert differs


def test_word_carriers_decide_the_word_label(ner):
    a = analyze_tokens(ner, build_head(ner), "Ngozi Adebayo works for Vinacapital in Lagos.", aggregation="first")
    assert set(a.entities) == {"first"}
    split = [w for w in a.words if len(w.tokens) > 1]
    assert split and all(a.token_word[t] == a.words.index(w) for w in split for t in w.tokens)
    for w in split:
        assert w.carriers("first") == (w.tokens[0],) and w.carriers("average") == w.tokens
        assert w.max == max(w.tokens, key=lambda t: a.softmax[t].max())
        assert a.text[w.start:w.end] == w.text
    # under "first" each word takes its first subword's tag: the entity groups' spans follow the words
    firsts = {w.start: a.tags[w.first] for w in a.words}
    for e in a.entities["first"]:
        assert e.start in firsts and firsts[e.start].split("-")[-1] == e.label


def test_cli_analyze_token_json(token_checkpoint, capsys):
    code = main(["analyze", "--checkpoint", str(token_checkpoint), "--text", SENTENCES[0], "--json",
                 "--aggregation", "first"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["task"] == "token-classification" and out["aggregation"] == "first"
    assert np.asarray(out["token_logits"]).shape == (len(out["tokens"]), len(token_model.TAGS))
    assert len(out["tags"]) == len(out["tokens"]) and out["tags"][0] in token_model.TAGS
    assert out["entities"] and set(out["entities"][0]) == {"entity_group", "word", "start", "end", "score"}


def test_token_lig_is_complete(ner, capsys, token_checkpoint):
    a = analyze_tokens(ner, build_head(ner), SENTENCES[0])
    k = a.words[1].tokens[1]  # a subword of "Kowalczyk"
    r = attribute(ner, build_head(ner), text=SENTENCES[0], method="lig", target=ner.labels.index("I-PER"),
                  target_token=k)
    assert r.error <= 0.01 and r.target_token == k and r.target_label == "I-PER"
    assert r.f_x == pytest.approx(a.logits[k, ner.labels.index("I-PER")], abs=1e-4)
    code = main(["analyze", "--checkpoint", str(token_checkpoint), "--text", SENTENCES[0], "--json",
                 "--attributions", "lig", "--target-token", str(k), "--target", "I-PER"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["attributions"]["target_token"] == k and out["attributions"]["error"] <= 0.01
    assert out["attributions"]["target"] == "I-PER"


def test_every_label_at_a_token(token_archs):
    ck = token_archs["bert"]
    grid = every_label(ck, build_head(ck), text=TEXT, token=2)
    assert grid.scores.shape == (3, len(grid.rows[0].tokens)) and grid.labels == ck.labels
    assert all(e <= 0.01 for e in grid.errors)
    logits, _ = _hf(ck, TEXT)
    np.testing.assert_allclose([r.f_x for r in grid.rows], logits[2], atol=1e-4)


def _one_line(capsys, *args) -> str:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


def test_wrong_task_gets_one_line(tiny, tiny_root, ner, token_checkpoint, capsys):
    seq = tiny["bert"]
    with pytest.raises(AnalysisError, match="not a token classifier"):
        analyze_tokens(seq, build_head(seq), TEXT)
    with pytest.raises(AnalysisError, match="is a token classifier") as err:
        analyze(ner, build_head(ner), TEXT)
    assert "\n" not in str(err.value) and err.value.message("vi") != str(err.value)
    with pytest.raises(HeadError, match="pools the tokens") as err:
        build_head(ner, "bert")
    assert err.value.message("vi") != str(err.value)
    with pytest.raises(HeadError, match="one row of logits per token"):
        build_head(seq, "linear-per-token")
    with pytest.raises(AttributionError, match="choose the token"):
        attribute(ner, build_head(ner), text=TEXT, method="saliency")
    with pytest.raises(AttributionError, match="whole text"):
        attribute(seq, build_head(seq), text=TEXT, method="saliency", target_token=1)
    seq_name = str(tiny_root / "tiny-bert")
    assert "--aggregation applies to token classifiers only" in _one_line(
        capsys, "analyze", "--checkpoint", seq_name, "--text", TEXT, "--aggregation", "simple")
    assert "--target-token" in _one_line(capsys, "analyze", "--checkpoint", seq_name, "--text", TEXT,
                                         "--attributions", "lig", "--target-token", "1")
    assert "mean-pool" in _one_line(capsys, "analyze", "--checkpoint", token_checkpoint, "--text", TEXT,
                                    "--head", "mean-linear")
    assert "--target-token INDEX" in _one_line(capsys, "analyze", "--checkpoint", token_checkpoint, "--text", TEXT,
                                               "--attributions", "lig")
    assert "outside the text's" in _one_line(capsys, "analyze", "--checkpoint", token_checkpoint, "--text", TEXT,
                                             "--attributions", "lig", "--target-token", "500")
    assert "not a label" in _one_line(capsys, "analyze", "--checkpoint", token_checkpoint, "--text", TEXT,
                                      "--attributions", "lig", "--target-token", "1", "--target", "B-XYZ")


def test_a_100000_token_text_is_truncated_with_one_line(ner, ner_pipeline, token_checkpoint, capsys):
    text = "Paris " * 100_000
    code = main(["analyze", "--checkpoint", str(token_checkpoint), "--text", text, "--json"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err.count("\n") == 1 and captured.err.startswith("note: ")
    out = json.loads(captured.out)
    assert out["truncated_tokens"] > 0 and len(out["tokens"]) == ner.tokenizer.model_max_length
    # pipeline() truncates at the tokenizer's length too: the same entities
    _same(out["entities"], ner_pipeline(text, aggregation_strategy="simple"))


def test_the_public_api_analyses_tokens(ner):
    import explorer

    a = explorer.analyze_tokens(ner, SENTENCES[0], aggregation="max")
    assert a.aggregation == "max" and a.grouped() == a.entities["max"]
    assert json.loads(a.to_json())["task"] == "token-classification" and a._repr_html_()
