"""The attention kernel per call (explorer/model/kernel.py): one shared model, eager where attention weights
are read, sdpa elsewhere; equal to HF's own eager and sdpa models, and safe between threads."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

from explorer.model.inference import predict_logits
from explorer.explain.attribution import attribute
from explorer.explain.faithfulness import model_prob
from explorer.model import kernel
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.features import encoder_features
from explorer.model.heads import build_head
from tests.test_archs import arch_root, archs  # noqa: F401  (fixtures: every architecture, saved and loaded)
from tests.tiny_archs import ARCHS

TEXTS = ["The quick brown fox jumps over the lazy dog.", "Fine."]  # ragged: the padded row needs its mask
REAL = "The battery lasts all day, but the charger gets far too hot after an hour of use."


@pytest.fixture
def sdpa_calls(monkeypatch):
    """The threads that ran transformers' sdpa attention, one entry per layer call."""
    calls: list[int] = []
    real = ALL_ATTENTION_FUNCTIONS["sdpa"]

    def spy(*args, **kwargs):
        calls.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setitem(ALL_ATTENTION_FUNCTIONS._global_mapping, "sdpa", spy)
    return calls


def _logits(model, enc, kernel_name: str | None = None) -> torch.Tensor:
    with torch.inference_mode():
        if kernel_name is None:
            return model(**enc).logits
        with kernel.attention_kernel(model, kernel_name):
            return model(**enc).logits


@pytest.mark.parametrize("arch", ARCHS)
def test_each_kernel_is_hf_s_own(arch_root, archs, arch):
    folder, ck = str(arch_root / f"tiny-{arch}"), archs[arch]
    rows = TEXTS if ck.model.config.pad_token_id is not None else TEXTS[:1]  # GPT-2 pads nothing
    enc = ck.tokenizer(rows, padding=True, return_tensors="pt")
    hf_eager = AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="eager").eval()
    torch.testing.assert_close(_logits(ck.model, enc, "eager"), _logits(hf_eager, enc), rtol=0, atol=0)
    with kernel.attention_kernel(ck, "sdpa") as used:
        pass
    if kernel.switchable(ck.model):  # derived from the model: every encoder or decoder the interface serves
        assert used == "sdpa" and arch not in ("deberta", "deberta-v2", "mpnet", "gpt2")
        hf_sdpa = AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="sdpa").eval()
        torch.testing.assert_close(_logits(ck.model, enc, "sdpa"), _logits(hf_sdpa, enc), rtol=0, atol=0)
    else:  # the class has no sdpa, or decides something by the kernel's name: eager whatever is asked
        assert used == "eager" and arch in ("deberta", "deberta-v2", "mpnet", "gpt2")
        torch.testing.assert_close(_logits(ck.model, enc, "sdpa"), _logits(hf_eager, enc), rtol=0, atol=0)
    # Both kernels agree to the documented tolerance, and eager stays the default outside any block.
    torch.testing.assert_close(_logits(ck.model, enc, "sdpa"), _logits(ck.model, enc, "eager"),
                               rtol=0, atol=kernel.TOLERANCE)
    torch.testing.assert_close(_logits(ck.model, enc), _logits(ck.model, enc, "eager"), rtol=0, atol=0)


def test_minilm_logits_agree_within_tolerance_at_256_tokens(sentiment):
    enc = sentiment.tokenizer(" ".join(["wonderful, terrible"] * 200), truncation=True, max_length=256,
                              return_tensors="pt")
    eager, sdpa = _logits(sentiment.model, enc, "eager"), _logits(sentiment.model, enc, "sdpa")
    assert kernel.switchable(sentiment.model)
    torch.testing.assert_close(sdpa, eager, rtol=0, atol=kernel.TOLERANCE)


def test_analysis_reads_weights_even_inside_an_sdpa_block(sentiment):
    head = build_head(sentiment, "own")
    outside = analyze(sentiment, head, REAL)
    with kernel.attention_kernel(sentiment, "sdpa"):
        inside = analyze(sentiment, head, REAL)
    assert inside.attentions.shape == outside.attentions.shape and inside.attentions.shape[0] == 6
    np.testing.assert_array_equal(inside.attentions, outside.attentions)
    np.testing.assert_array_equal(inside.logits, outside.logits)


def test_attributions_features_and_predictions_run_sdpa_within_tolerance(sentiment, sdpa_calls):
    # The same checkpoint loaded again and kept eager: what these paths gave before the switch.
    eager = load_checkpoint("minilm-sentiment")
    eager.model.set_attn_implementation("eager")
    head, head_e = build_head(sentiment, "own"), build_head(eager, "own")
    for method in ("saliency", "lig"):
        sdpa_calls.clear()
        fast = attribute(sentiment, head, text=REAL, method=method)
        assert len(sdpa_calls) > 0, method  # every forward of the attribution ran sdpa
        sdpa_calls.clear()
        slow = attribute(eager, head_e, text=REAL, method=method)
        assert not sdpa_calls
        assert fast.target == slow.target
        np.testing.assert_allclose(fast.scores, slow.scores, rtol=1e-4, atol=1e-5 * np.abs(slow.scores).max())
        if method == "lig":
            assert fast.n_steps == slow.n_steps and fast.error <= 0.01
    ids = [list(fast.token_ids), list(fast.token_ids[:5]) + [fast.token_ids[-1]]]
    for name, run in (("features", lambda c, h: encoder_features(c, TEXTS)),
                      ("label report", lambda c, h: predict_logits(c, TEXTS)),
                      ("faithfulness", lambda c, h: model_prob(c, h, target=0)(ids))):
        sdpa_calls.clear()
        got = run(sentiment, head)
        assert sdpa_calls, name
        np.testing.assert_allclose(got, run(eager, head_e), rtol=0, atol=kernel.TOLERANCE, err_msg=name)


def test_fine_tuning_trains_under_sdpa(tiny, sdpa_calls):
    from explorer.data.dataset import prepare, read_csv
    from explorer.train.finetune import Settings, finetune

    rows = "".join(f"{w} movie number {i},{w}\n" for i in range(10) for w in ("good", "bad"))
    data = prepare(read_csv(("text,label\n" + rows).encode()))
    result = finetune(tiny["bert"], data, settings=Settings(mode="full", epochs=1, batch_size=8, max_length=16))
    assert sdpa_calls  # forward and backward ran the fast kernel
    assert kernel.switchable(result.checkpoint.model)
    assert kernel.kernel_of(result.checkpoint.model) == "eager"  # the kept model reads weights by default


def test_two_threads_with_different_kernels_each_get_their_own(sentiment, sdpa_calls):
    """One shared model, two threads interleaving: the eager one always gets attention weights and HF eager's
    exact logits, the sdpa one HF sdpa's exact logits; the spy sees only the sdpa thread."""
    model = sentiment.model
    enc = sentiment.tokenizer([REAL, "Too hot."], padding=True, return_tensors="pt")
    want = {k: _logits(model, enc, k) for k in kernel.KERNELS}
    assert not torch.equal(want["eager"], want["sdpa"])  # a kernel mix-up would show in the logits
    sdpa_calls.clear()
    start, errors, idents = threading.Barrier(2), [], {}

    def work(name: str) -> None:
        idents[name] = threading.get_ident()
        start.wait()
        try:
            for _ in range(12):
                with torch.inference_mode(), kernel.attention_kernel(model, name):
                    out = model(**enc, output_attentions=name == "eager")
                if not torch.equal(out.logits, want[name]):
                    errors.append(f"{name}: logits differ")
                if name == "eager" and not (out.attentions and all(a is not None for a in out.attentions)):
                    errors.append("eager: no attention weights")
        except Exception as err:  # noqa: BLE001 - reported below with the thread's name
            errors.append(f"{name}: {err!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in kernel.KERNELS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert set(sdpa_calls) == {idents["sdpa"]}
    assert len(sdpa_calls) == 12 * model.config.num_hidden_layers


def test_a_new_thread_starts_eager_whatever_its_parent_runs(sentiment):
    seen = []
    with kernel.attention_kernel(sentiment, "sdpa"):
        t = threading.Thread(target=lambda: seen.append(kernel.kernel_of(sentiment.model)))
        t.start()
        t.join()
        assert kernel.kernel_of(sentiment.model) == "sdpa"
    assert seen == ["eager"] and kernel.kernel_of(sentiment.model) == "eager"


def test_an_unknown_kernel_is_refused(sentiment):
    with pytest.raises(ValueError):
        with kernel.attention_kernel(sentiment, "flash"):
            pass


def test_a_saved_model_names_no_custom_kernel(sentiment, tmp_path):
    # The switch lives in memory only: an export loads anywhere with HF's own default.
    sentiment.model.config.save_pretrained(tmp_path)
    assert kernel.SWITCH not in (tmp_path / "config.json").read_text()


def test_the_list_of_switchable_architectures_is_the_tested_one():
    """SWITCHABLE names exactly the tiny architectures test_each_kernel_is_hf_s_own proves switch."""
    assert set(ARCHS) - kernel.SWITCHABLE == {"deberta", "deberta-v2", "mpnet", "gpt2"}
    assert kernel.SWITCHABLE <= set(ARCHS)  # no architecture switches untested


def test_every_hook_the_switch_needs_is_there():
    """What the switch calls in transformers, by public name: a later version without one of them fails here,
    not in a forward pass."""
    import importlib

    from transformers import PreTrainedModel
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    for model_type in sorted(kernel.SWITCHABLE):
        name = model_type_to_module_name(model_type)
        modeling = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
        assert callable(getattr(modeling, kernel.EAGER_HOOK, None)), f"{model_type} lost {kernel.EAGER_HOOK}"
    assert "sdpa" in ALL_ATTENTION_FUNCTIONS and kernel.SWITCH in ALL_ATTENTION_FUNCTIONS
    assert all(name in ALL_MASK_ATTENTION_FUNCTIONS for name in ("sdpa", "eager", kernel.SWITCH))
    assert callable(getattr(PreTrainedModel, "set_attn_implementation", None))


def test_batched_predictions_come_back_in_the_rows_order(tiny):
    """predict_logits batches rows of similar length together (less padding) and returns them in the
    order given: each row's logits are its own, alone and unpadded, texts and sentence pairs alike."""
    ck = tiny["bert"]
    texts = ["a much longer sentence than the others in this little list of texts", "short", "mid length one",
             "tiny", "another fairly long sentence, with a comma", "x"]
    pairs = ["b", "a longer second text here", "c", "d e f", "g", "a second text"]
    for kw in ({}, {"text_pairs": pairs}):
        got = predict_logits(ck, texts, batch_size=2, **kw)
        alone = np.concatenate([predict_logits(ck, [t], batch_size=1, **({"text_pairs": [kw["text_pairs"][i]]}
                                                                       if kw else {})) for i, t in enumerate(texts)])
        np.testing.assert_allclose(got, alone, rtol=0, atol=1e-5)
    assert predict_logits(ck, []).shape == (0, 3)
