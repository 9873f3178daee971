"""Every architecture of tests/tiny_archs.py: the own head derived from the model equals HF's own logits;
pooling, truncation and refusals are truthful. One tiny checkpoint per architecture, built once."""
import numpy as np
import pytest
import torch

from explorer.cli import main
from explorer.explain import dropout
from explorer.model.analysis import analyze, encoder_inputs
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head, run_head
from explorer.text.errors import ExplorerError
from explorer.model.inference import predict_logits
from tests.tiny_archs import ARCHS, UNSUPPORTED, save

TEXT = "The quick brown fox jumps over the lazy dog."
SHORT = "Fine."
LONG = " ".join(["wonderful"] * 100)
DECODERS = ("gpt2", "llama", "qwen2", "mistral")


@pytest.fixture(scope="session")
def arch_root(tiny_root):
    root = tiny_root / "archs"
    for a in ARCHS:
        save(a, root)
    return root


@pytest.fixture(scope="session")
def archs(arch_root):
    return {a: load_checkpoint(str(arch_root / f"tiny-{a}")) for a in ARCHS}


def _hf(ck, *texts, **kw) -> torch.Tensor:
    with torch.inference_mode():
        return ck.model(**ck.tokenizer(*texts, return_tensors="pt", **kw)).logits


@pytest.mark.parametrize("arch", ARCHS)
def test_own_head_equals_hf_logits(archs, arch):
    ck = archs[arch]
    a = analyze(ck, build_head(ck, "own"), TEXT)
    np.testing.assert_allclose(a.logits, _hf(ck, TEXT)[0].numpy(), atol=1e-5)
    assert a.new_weights == () and a.steps[-1][0] != "" and len(a.steps) >= 2
    # which token the head reads: the first, or on a causal model the last non-pad one, as HF pools it
    ids = list(a.token_ids)
    pad = ck.model.config.pad_token_id
    want = (max(i for i, t in enumerate(ids) if t != pad) if pad is not None else len(ids) - 1) \
        if arch in DECODERS else 0
    assert a.reads == want


@pytest.mark.parametrize("arch", ARCHS)
def test_padded_batch_equals_hf_logits(archs, arch):
    """Padding on either side: the head pools the rows exactly as the model's own forward does."""
    ck = archs[arch]
    if ck.model.config.pad_token_id is None:  # HF itself refuses padded batches there
        pytest.skip("no pad token")
    head = build_head(ck, "own")
    for side in ("right", "left") if arch in DECODERS else ("right",):
        enc = ck.tokenizer([SHORT, TEXT], return_tensors="pt", padding=True, padding_side=side)
        with torch.inference_mode():
            hidden = ck.model.base_model(**encoder_inputs(enc, ck)).last_hidden_state
            got = run_head(head, hidden, enc["attention_mask"], input_ids=enc["input_ids"])[-1][1]
            torch.testing.assert_close(got, ck.model(**enc).logits, atol=1e-5, rtol=1e-5)


def test_label_report_predicts_without_a_pad_token(archs):
    """GPT-2 has no pad id (HF refuses its batches): the label report's logits come one row at a time."""
    ck = archs["gpt2"]
    assert ck.model.config.pad_token_id is None
    texts = [SHORT, TEXT, SHORT + " " + TEXT]
    got = predict_logits(ck, texts, batch_size=2)
    np.testing.assert_allclose(got, np.concatenate([_hf(ck, t).numpy() for t in texts]), atol=1e-5)


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_batch_readers_stop_at_the_position_table(archs, arch):
    """A 64-position model whose tokenizer allows 512: the audit's features and the label report read
    what fits (as max_length=64 does) instead of indexing past the position table."""
    from explorer.model.checkpoints import max_length
    from explorer.model.features import encoder_features
    ck = archs[arch]
    texts = [LONG, SHORT]
    np.testing.assert_array_equal(encoder_features(ck, texts, max_length=128),
                                  encoder_features(ck, texts, max_length=max_length(ck)))
    assert predict_logits(ck, texts, max_length=128).shape == (2, len(ck.labels))


def test_steps_come_from_the_models_code(archs):
    names = {a: [s.name for s in build_head(archs[a]).steps] for a in ("bert", "roberta", "deberta-v2", "llama")}
    assert names["bert"] == ["first token", "bert.pooler.dense", "tanh", "dropout", "classifier"]  # pooler in BertModel
    assert "tanh" in names["roberta"]  # torch.tanh in RobertaClassificationHead: a function, not a module
    assert "gelu" in names["deberta-v2"]  # ACT2FN[...] called inline in ContextPooler
    assert names["llama"] == ["last non-pad token", "score"]


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_named_first_token_head_reads_the_last_token_on_causal_models(archs, arch):
    ck = archs[arch]
    head = build_head(ck, "cls-linear")
    assert head.steps[0].op == "last"
    own = analyze(ck, build_head(ck, "own"), TEXT)
    assert analyze(ck, head, TEXT).reads == own.reads > 0


@pytest.mark.parametrize("arch", ["roberta", "deberta-v2", "llama"])
def test_own_head_any_layer_and_mc_dropout(archs, arch):
    ck = archs[arch]
    head = build_head(ck, "own")
    a = analyze(ck, head, TEXT)
    for layer in a.hidden_states:  # the head applies to every layer's hidden states
        assert run_head(head, torch.tensor(layer)[None], torch.ones(1, layer.shape[0]))[-1][1].shape == (1, 3)
    mc = dropout.mc_dropout(head, a.hidden_states[-1], p=0.5, samples=8, token_ids=a.token_ids)
    if any(s.op == "dropout" for s in head.steps):
        assert np.ptp(mc.logits, axis=0).max() > 0  # samples differ
    np.testing.assert_allclose(mc.eval_logits, a.logits, atol=1e-5)
    assert not any(m.training for m in ck.model.modules())  # never train mode


@pytest.mark.parametrize("arch", ARCHS)
def test_long_text_truncates_and_still_matches_hf(archs, arch):
    ck = archs[arch]
    a = analyze(ck, build_head(ck, "own"), LONG)
    assert a.truncated_tokens > 0 and len(a.tokens) == a.max_length
    with torch.inference_mode():
        ref = ck.model(input_ids=torch.tensor([a.token_ids])).logits[0].numpy()
    np.testing.assert_allclose(a.logits, ref, atol=1e-5)


def test_tokenizer_without_max_length_uses_the_position_limit(tiny_root):
    """MPNet counts positions from its padding_idx (1) + 1: 64 positions leave 62 tokens, and the limit is tight."""
    ck = load_checkpoint(str(save("mpnet", tiny_root / "nolimit", model_max_length=int(1e30))))
    a = analyze(ck, build_head(ck), LONG)
    assert a.max_length == 62 and len(a.tokens) == 62
    with pytest.raises(IndexError), torch.inference_mode():
        ck.model(input_ids=torch.tensor([list(a.token_ids) + [a.token_ids[-1]]]))


def test_model_max_length_below_the_special_tokens_is_ignored_and_dropped_is_true(tiny_root, capsys):
    """model_max_length=1 cannot hold [CLS] ... [SEP]: the tokenizer returns the text whole, so the page said
    "9 tokens dropped" while every token was used (and a long text reached past the 64 positions)."""
    path = save("bert", tiny_root / "maxlen1", model_max_length=1)
    ck = load_checkpoint(str(path))
    assert ck.tokenizer.model_max_length == 1
    a = analyze(ck, build_head(ck), TEXT)
    assert a.max_length == 64 and a.truncated_tokens == 0 and len(a.tokens) == len(ck.tokenizer(TEXT)["input_ids"])
    long = analyze(ck, build_head(ck), LONG)  # 100 words: 102 tokens into 64 positions
    assert len(long.tokens) == 64 and long.truncated_tokens == 102 - 64
    assert main(["analyze", "--checkpoint", str(path), "--text", TEXT]) == 0
    assert "truncated" not in capsys.readouterr().out


@pytest.mark.parametrize("arch", list(UNSUPPORTED))
def test_unsupported_architectures_are_one_line(tiny_root, capsys, arch):
    kw = {"model_max_length": int(1e30)} if arch == "xlnet" else {}  # xlnet's tokenizer has no limit
    path = save(arch, tiny_root / "unsupported", **kw)
    assert main(["analyze", "--checkpoint", str(path), "--text", TEXT]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not supported yet" in err and arch in err
    with pytest.raises(ExplorerError) as ex:
        build_head(load_checkpoint(str(path)), "cls-linear")
    assert ex.value.message("vi").startswith("chưa hỗ trợ")


PAIR = ("A man is playing a guitar on stage.", "Someone performs music.")


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_sentence_pair_equals_hf(archs, arch):
    ck = archs[arch]
    a = analyze(ck, build_head(ck, "own"), *PAIR[:1], text_pair=PAIR[1])
    np.testing.assert_allclose(a.logits, _hf(ck, *PAIR)[0].numpy(), atol=1e-5)
    sep = a.tokens.index("[SEP]")
    assert a.segments == (0,) * (sep + 1) + (1,) * (len(a.tokens) - sep - 1)  # [SEP] closes text A
    if "token_type_ids" in ck.tokenizer.model_input_names:  # the segments reach the model
        single = ck.model(input_ids=torch.tensor([a.token_ids])).logits[0].detach().numpy()
        assert not np.allclose(a.logits, single, atol=1e-5)


def test_cli_text_pair_and_attributions_json(capsys, arch_root, archs):
    assert main(["analyze", "--checkpoint", str(arch_root / "tiny-bert"), "--head", "own", "--text", PAIR[0],
                 "--text-pair", PAIR[1], "--json", "--attributions", "lig"]) == 0
    import json

    d = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(d["logits"], _hf(archs["bert"], *PAIR)[0].numpy(), atol=1e-5)
    assert d["segments"][0] == 0 and d["segments"][-1] == 1 and d["text_pair"] == PAIR[1]
    att = d["attributions"]
    assert att["converged"] is True and abs(att["delta"]) <= 0.01 * abs(att["f_x"] - att["f_baseline"])
    assert "pad token" in att["baseline_definition"]


@pytest.mark.parametrize("arch", ARCHS)
def test_attributions_complete_on_every_architecture(archs, arch):
    from explorer.explain.attribution import attribute

    ck = archs[arch]
    head = build_head(ck, "own")
    r = attribute(ck, head, text=TEXT, method="lig")
    assert r.converged and r.error <= 0.01
    assert r.f_x == pytest.approx(float(analyze(ck, head, TEXT).logits[r.target]), abs=1e-4)
    assert np.all(r.scores[list(r.special)] == 0)


def test_load_report_lists_every_missing_and_unused_weight(tiny_root, capsys):
    from safetensors.torch import load_file, save_file

    path = save("bert", tiny_root / "damaged")
    weights = load_file(str(path / "model.safetensors"))
    gone = "bert.encoder.layer.0.attention.self.query.weight"
    del weights[gone], weights["classifier.bias"]
    weights["bert.encoder.layer.9.output.dense.weight"] = torch.zeros(2, 2)
    save_file(weights, str(path / "model.safetensors"), metadata={"format": "pt"})
    ck = load_checkpoint(str(path))
    a = analyze(ck, build_head(ck, "own"), TEXT)
    assert set(a.new_weights) == {gone, "classifier.bias"}
    assert a.unused_weights == ("bert.encoder.layer.9.output.dense.weight",)
    named = analyze(ck, build_head(ck, "mean-linear"), TEXT)  # a new head: the encoder's gap still shows
    assert gone in named.new_weights and "classifier.bias" in named.new_weights
    assert main(["analyze", "--checkpoint", str(path), "--text", TEXT, "--json"]) == 0
    import json

    d = json.loads(capsys.readouterr().out)
    assert set(d["new_weights"]) == {gone, "classifier.bias"} and d["unused_weights"] == list(a.unused_weights)


def _pair_page(name: str, path) -> "AppTest":
    from streamlit.testing.v1 import AppTest

    from explorer.ui import OTHER
    from tests.conftest import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{name}.py")
    for key, value in {"checkpoint": OTHER, "checkpoint_other": str(path), "head": "own", "text": PAIR[0],
                       "text_pair": PAIR[1], "seed": 0, "lang": "en"}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    return at


def test_pages_mark_the_pair_boundary(arch_root, archs):
    import json

    at = _pair_page("tokens", arch_root / "tiny-bert")
    table = at.dataframe[0].value
    assert list(table["segment"]) == ["AB"[s] for s in analyze(archs["bert"], build_head(archs["bert"]), PAIR[0],
                                                                text_pair=PAIR[1]).segments]
    # The charts hide special tokens by default: text A's words, then text B's from just after the mark.
    a_words = list(table["token"]).index("[SEP]") - 1  # [CLS], text A's tokens, [SEP]
    specs = [json.loads(n.proto.spec) for n in at.get("plotly_chart")]
    marked = [s for s in specs if any(a.get("text") == "text B ▸" for a in s["layout"].get("annotations", []))]
    assert len(marked) >= 3  # [CLS] attention, rollout, highlighted text
    for s in marked:
        line = next(sh for sh in s["layout"]["shapes"] if sh.get("line", {}).get("dash") == "dash")
        assert line["x0"] == a_words - 0.5  # between text A's last token and text B's first
    at = _pair_page("attributions", arch_root / "tiny-bert")
    assert any("text B ▸" in h.proto.body for h in at.get("html"))
    assert any("pad token" in c.value for c in at.caption)


def test_home_says_which_token_a_causal_head_reads(arch_root, archs):
    at = _pair_page("home", arch_root / "tiny-llama")
    assert any("last non-pad token" in c.value for c in at.caption)


def test_compare_and_dropout_pool_like_the_analysis_on_eos_as_pad(archs):
    """llama's pad id is [SEP], which ends the text: given the ids, every helper reads the token before it."""
    from explorer.explain import compare

    ck = archs["llama"]
    head = build_head(ck, "own")
    a = analyze(ck, head, TEXT)
    (r,) = compare.compare_heads(a.hidden_states[-1], {"own": head}, labels=a.labels, ptype=a.problem_type,
                                 token_ids=a.token_ids)
    np.testing.assert_allclose(r.logits, a.logits, atol=1e-5)


def test_faithfulness_on_a_pair_keeps_segments(archs):
    """The full pair row of AOPC's batch gives the analysis's own probability, segments included."""
    from explorer.explain import faithfulness
    from explorer.explain.attribution import attribute

    ck = archs["bert"]
    head = build_head(ck, "own")
    a = analyze(ck, head, PAIR[0], text_pair=PAIR[1])
    r = attribute(ck, head, text=PAIR[0], method="saliency", text_pair=PAIR[1])
    prob = faithfulness.model_prob(ck, head, target=r.target, typed=True)
    np.testing.assert_allclose(prob([list(zip(r.token_ids, r.segments))])[0], a.softmax[r.target], atol=1e-5)
    rows = faithfulness.compare_methods(ck, head, text=PAIR[0], methods=("saliency",), text_pair=PAIR[1])
    assert np.isfinite(rows[0].comprehensiveness)


def _demo_data():
    from explorer.data.dataset import demo_frame, prepare, read_csv

    return prepare(read_csv(demo_frame(per_class=4, seed=1).to_csv(index=False).encode()))


def _with_tokenizer(ck, **attrs):
    """`ck` read by a private tokenizer with `attrs` set (the cached one is never touched)."""
    import dataclasses

    from explorer.model import tokenizer as shared_tokenizer

    tok = shared_tokenizer.private(ck.tokenizer)
    for k, v in attrs.items():
        setattr(tok, k, v)
    return dataclasses.replace(ck, tokenizer=tok)


def _through_head(ck, feats: torch.Tensor) -> torch.Tensor:
    """What head mode's training path computes: the own head on each feature as a 1-token sequence."""
    with torch.no_grad():
        return run_head(build_head(ck, "own"), feats.unsqueeze(1), torch.ones(len(feats), 1))[-1][1]


@pytest.mark.parametrize("arch", ["gpt2", "llama", "qwen2"])
def test_last_pool_is_the_token_the_head_reads(archs, arch):
    """The "last" pool of a right-padded batch is, for every row, the state HF's classifier pools from that
    text alone (no pad id: gpt2; eos-as-pad, which the tokenizer's padding is not: llama); where the model
    and tokenizer agree on the pad id, it is what HF pools from the padded batch itself, on either side."""
    from explorer.model.features import POOLS, encoder_features

    ck = archs[arch]
    last = POOLS.index("last")
    feats = torch.from_numpy(encoder_features(ck, [TEXT, SHORT])[:, last])  # SHORT is padded
    alone = torch.cat([_hf(ck, t) for t in (TEXT, SHORT)])
    torch.testing.assert_close(_through_head(ck, feats), alone, atol=1e-5, rtol=1e-5)
    if arch == "qwen2":
        for side in ("right", "left"):
            sided = _with_tokenizer(ck, padding_side=side)
            feats = torch.from_numpy(encoder_features(sided, [TEXT, SHORT])[:, last])
            batch = _hf(ck, [TEXT, SHORT], padding=True, padding_side=side)
            torch.testing.assert_close(_through_head(ck, feats), batch, atol=1e-5, rtol=1e-5)


def test_features_without_a_pad_token(archs):
    """A tokenizer that cannot pad (GPT-2's) encodes each row alone: same numbers as right padding."""
    from explorer.model.features import encoder_features

    ck = archs["gpt2"]
    bare = _with_tokenizer(ck, pad_token=None)
    assert bare.tokenizer.pad_token is None
    np.testing.assert_allclose(encoder_features(bare, [TEXT, SHORT]), encoder_features(ck, [TEXT, SHORT]),
                               atol=1e-5)


@pytest.mark.parametrize("arch", ["gpt2", "llama", "qwen2"])
def test_head_mode_fine_tuning_trains_the_token_a_decoder_head_reads(archs, arch):
    """The fine-tuned model's own forward on a text equals the training path on that text's cached "last"
    feature: the head was trained on what it reads (the "first" feature, a causal model's first token, is not)."""
    from explorer.model.features import cached_features
    from explorer.train.finetune import Settings, finetune

    ck = archs[arch]
    data = _demo_data()
    result = finetune(ck, data, settings=Settings(mode="head", epochs=2, max_length=32))
    tuned = result.checkpoint
    assert result.history and not torch.equal(tuned.model.score.weight, ck.model.score.weight)
    texts = data.texts[:4]
    with torch.inference_mode():
        want = torch.cat([tuned.model(**tuned.tokenizer(t, truncation=True, max_length=32,
                                                        return_tensors="pt")).logits for t in texts])
    got = _through_head(tuned, cached_features(ck, data.texts, 32, "last")[:4])
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    first = _through_head(tuned, cached_features(ck, data.texts, 32, "first")[:4])
    assert not torch.allclose(first, want, atol=1e-3)


def test_head_mode_fine_tuning_refuses_a_mean_pooling_head(archs):
    """A head that pools every token has no one token's features to train on: refused, full mode is not."""
    import copy
    import dataclasses

    from explorer.model.heads import derive
    from explorer.train.finetune import FinetuneError, Settings, finetune

    model = copy.deepcopy(archs["modernbert"].model)
    model.config.classifier_pooling = "mean"
    ck = dataclasses.replace(archs["modernbert"], model=model)
    assert derive(ck).steps[0].op == "mean"
    with pytest.raises(FinetuneError, match="pools every token"):
        finetune(ck, _demo_data(), settings=Settings(mode="head", epochs=1))


def test_cli_reports_attributions_that_do_not_converge(capsys, arch_root, archs, monkeypatch):
    import functools

    from explorer.explain import attribution

    monkeypatch.setattr(attribution, "MAX_STEPS", 5)  # one interval of 5 points, then give up
    monkeypatch.setattr(attribution, "attribute", functools.partial(attribution.attribute, tolerance=1e-12))
    assert main(["analyze", "--checkpoint", str(arch_root / "tiny-gpt2"), "--text", TEXT, "--attributions",
                 "lig"]) == 0
    assert "not converged" in capsys.readouterr().out


@pytest.mark.parametrize("page_name", ["dropout", "pooled", "compare", "encoder", "lesson"])
def test_pages_run_on_a_decoder_only_pair(arch_root, page_name):
    """A head with no dropout step and last-token pooling, on a sentence pair: no exception, no error box."""
    _pair_page(page_name, arch_root / "tiny-llama")


@pytest.mark.parametrize("arch", ARCHS)
def test_audit_features_on_every_architecture(archs, arch):
    """The audit's feature pools on any architecture: "first" and "mean" read the model's own last hidden
    state (after a decoder's final norm, which hidden_states may lack), and the layer average is a unit vector."""
    from explorer.model.features import encoder_features

    ck = archs[arch]
    feats = encoder_features(ck, [TEXT, SHORT])  # (2, 4, hidden); TEXT is the longer, so it has no padding
    with torch.inference_mode():
        h = ck.model.base_model(**ck.tokenizer([TEXT], return_tensors="pt")).last_hidden_state[0]
    np.testing.assert_allclose(feats[0, 0], h[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(feats[0, 1], torch.nn.functional.normalize(h.mean(0), dim=0).numpy(), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(feats[:, 2], axis=-1), 1.0, atol=1e-5)
