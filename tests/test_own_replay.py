"""The own head's replayed calls (its fast path) give exactly what the model's real code gives."""
import copy
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
from torch import nn

from explorer.model import own_head, replay
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from tests.tiny_archs import save

TEXT = "The quick brown fox jumps over the lazy dog."
OTHER = "Nothing about this film worked for me."
ARCHS = ("bert", "deberta-v2", "llama", "gpt2")  # pooler inside the base model, inline gelu, last token, no pad id


@pytest.fixture(scope="module")
def checkpoints(tiny_root):
    """Two checkpoints per architecture: same code and shapes, different weights."""
    return {(a, seed): load_checkpoint(str(save(a, tiny_root / f"replay{seed}", seed=seed)))
            for a in ARCHS for seed in (1, 2)}


def _hf(ck, text) -> np.ndarray:
    with torch.inference_mode():
        return ck.model(**ck.tokenizer(text, return_tensors="pt")).logits[0].numpy()


def _real(own, states, mask, ids, p, gen):
    return own.values(own._run(states, mask, ids, p, gen), states)


@pytest.mark.parametrize("arch", ARCHS)
def test_replay_equals_the_real_code_bit_for_bit(checkpoints, arch):
    ck = checkpoints[arch, 1]
    own = build_head(ck, "own").own
    assert own.program is not None  # the fast path is the one analyses take
    a = analyze(ck, build_head(ck, "own"), TEXT)
    states = torch.tensor(a.hidden_states)  # every layer, as analyze batches them
    mask = torch.ones(states.shape[:2], dtype=torch.long)
    for ids in (torch.tensor([a.token_ids] * len(states)), None):  # real ids, or padding read off the mask
        for p in (None, 0.5):
            gens = [torch.Generator().manual_seed(7) if p else None for _ in range(2)]
            got = own.run(states, mask, ids, p, gens[0])
            want = _real(own, states, mask, ids, p, gens[1])
            assert len(got) == len(want) == len(own.steps)
            for g, w in zip(got, want):
                assert g.shape == w.shape and torch.equal(g, w)


@pytest.mark.parametrize("arch", ARCHS)
def test_two_checkpoints_of_one_architecture_each_get_their_own_logits(checkpoints, arch):
    one, two = checkpoints[arch, 1], checkpoints[arch, 2]
    first = {}
    for ck, text in [(one, TEXT), (two, TEXT), (one, OTHER), (two, OTHER), (one, TEXT), (two, TEXT)]:
        a = analyze(ck, build_head(ck, "own"), text)
        np.testing.assert_allclose(a.logits, _hf(ck, text), atol=1e-5)
        if (ck.name, text) in first:  # a second call gives the first one's numbers exactly
            b = first[ck.name, text]
            np.testing.assert_array_equal(a.layer_logits, b.layer_logits)
            assert all(n == m and np.array_equal(x, y) for (n, x), (m, y) in zip(a.steps, b.steps))
        first.setdefault((ck.name, text), a)
    assert not np.allclose(first[one.name, TEXT].logits, first[two.name, TEXT].logits)


def test_concurrent_sessions_get_the_sequential_numbers(checkpoints):
    """Sessions share one cached model and its derived program: replays running at once do not mix."""
    jobs = [(checkpoints[a, seed], text) for a in ("deberta-v2", "llama") for seed in (1, 2) for text in (TEXT, OTHER)]
    want = [analyze(ck, build_head(ck, "own"), text).layer_logits for ck, text in jobs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda job: analyze(job[0], build_head(job[0], "own"), job[1]).layer_logits, jobs * 3))
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, want[i % len(jobs)])


class _Branchy(nn.Module):
    """A head whose Python reads a tensor value: a replay would freeze one branch."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        return self.linear(x) if bool(x.sum() > 0) else -self.linear(x)


def test_a_head_steered_by_values_always_runs_the_real_code(checkpoints):
    ck = checkpoints["bert", 1]
    model = copy.deepcopy(ck.model)
    model.classifier = _Branchy(model.classifier)
    enc = ck.tokenizer(TEXT, return_tensors="pt")
    own = own_head.OwnHead(model, dict(enc))
    assert own.program is None
    hidden = torch.randn(1, 6, 32)
    mask = torch.ones(1, 6, dtype=torch.long)
    for sign in (1, -1):  # both branches, as the model's own code takes them
        with torch.inference_mode():
            pooled = model.bert.pooler(sign * hidden)
            torch.testing.assert_close(own.run(sign * hidden, mask)[-1], model.classifier(pooled), rtol=0, atol=0)


def test_a_model_in_train_mode_runs_the_real_code(checkpoints):
    """The replay was recorded in eval mode; a private copy put in train mode (full fine-tuning) gets
    the model's own dropout, as its real code would."""
    model = copy.deepcopy(checkpoints["bert", 1].model)
    own = own_head.OwnHead(model, dict(checkpoints["bert", 1].tokenizer(TEXT, return_tensors="pt")))
    hidden, mask = torch.randn(4, 6, 32), torch.ones(4, 6, dtype=torch.long)
    assert torch.equal(own.run(hidden, mask)[-1], own.run(hidden, mask)[-1])
    model.train()
    assert not torch.equal(own.run(hidden, mask)[-1], own.run(hidden, mask)[-1])


class _Doubled(nn.Module):
    """A head that computes a tensor from its weight on each call: a replay would keep a stale copy."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        return nn.functional.linear(x, self.linear.weight * 2, self.linear.bias)


@pytest.mark.parametrize("derived", [False, True])
def test_weights_changed_in_place_are_read_at_each_run(checkpoints, derived):
    """Head-mode fine-tuning steps the weights in place: every run uses the current ones."""
    ck = checkpoints["bert", 1]
    model = copy.deepcopy(ck.model)
    if derived:
        model.classifier = _Doubled(model.classifier)
    own = own_head.OwnHead(model, dict(ck.tokenizer(TEXT, return_tensors="pt")))
    assert (own.program is None) == derived
    hidden, mask = torch.randn(2, 6, 32), torch.ones(2, 6, dtype=torch.long)
    before = own.run(hidden, mask)[-1]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5)
    with torch.inference_mode():
        want = model.classifier(model.bert.pooler(hidden))
    got = own.run(hidden, mask)[-1]
    assert not torch.equal(got, before) and torch.equal(got, want)


def _leaves(obj):
    if type(obj) in (tuple, list):
        return [x for o in obj for x in _leaves(o)]
    if type(obj) is dict:
        return _leaves(list(obj.values()))
    return [obj]


@pytest.mark.parametrize("arch", ["bert", "llama"])
def test_a_programs_arguments_are_named_references(checkpoints, arch):
    """Each op reads the input or an earlier op's output; the only tensors it keeps are the model's own
    weights (the objects themselves); a last-token pooling takes each replay's index."""
    ck = checkpoints[arch, 1]
    program = build_head(ck, "own").own.program
    weights = {id(t) for t in (*ck.model.parameters(), *ck.model.buffers())}
    assert isinstance(program.ops[0].read, replay.Input)
    for k, op in enumerate(program.ops):
        leaves = _leaves((op.args, op.kwargs))
        assert all(isinstance(x, replay.Ref) for x in leaves)
        assert all(id(x.tensor) in weights for x in leaves if isinstance(x, replay.Param))
        assert all(x.op < k for x in (*leaves, op.read) if isinstance(x, replay.Output))
    params = [x for op in program.ops for x in _leaves((op.args, op.kwargs)) if isinstance(x, replay.Param)]
    assert params
    indexed = [op for op in program.ops if any(isinstance(x, replay.Index) for x in _leaves(op.args))]
    assert [op.func for op in indexed] == ([torch.Tensor.__getitem__] if arch == "llama" else [])


def test_a_recorded_run_replays_on_new_input_with_the_current_weights():
    gen = torch.Generator().manual_seed(0)
    w, x = torch.randn(4, 3, generator=gen), torch.randn(2, 3, generator=gen)

    def code(h, weight):
        return torch.tanh(nn.functional.linear(h, weight))

    with replay.Recorder(x, None, None) as recorder:
        y = code(x, w)
    run = recorder.run(y)
    assert [c.func for c in run.calls] == [nn.functional.linear, torch.tanh] and run.reads == frozenset()
    program = replay.Program(run, x, [w])
    new = torch.randn(5, 3, generator=gen)
    assert torch.equal(program.replay(new).logits, code(new, w))
    with torch.no_grad():
        w.add_(1.0)  # a fine-tuning step, in place
    assert torch.equal(program.replay(new).logits, code(new, w))
    with pytest.raises(replay.NotReplayable):
        replay.Program(run, x, [])  # w is not the model's: a tensor the run made, stale on replay
    with replay.Recorder(x, None, None) as recorder:
        y = code(x, w * 2)
    with pytest.raises(replay.NotReplayable):
        replay.Program(recorder.run(y), x, [w])  # computed from a weight outside the path
