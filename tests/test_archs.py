"""Every architecture of tests/tiny_archs.py: the own head derived from the model equals HF's own logits;
pooling, truncation and refusals are truthful. One tiny checkpoint per architecture, built once."""
import numpy as np
import pytest
import torch

from explorer import dropout
from explorer.analysis import analyze, encoder_inputs
from explorer.checkpoints import load_checkpoint
from explorer.cli import main
from explorer.errors import ExplorerError
from explorer.heads import build_head, run_head
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
    mc = dropout.mc_dropout(head, a.hidden_states[-1], 0.5, samples=8, token_ids=a.token_ids)
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
