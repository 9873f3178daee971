"""One home per concept: the problem type (with HF's loss, output and prediction), pooling, the
confusion count, and the audit's independence from training internals."""
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification, GPT2Config, GPT2ForSequenceClassification

from explorer.model import pooling
from explorer.model import problem as P
from explorer.model.problem import ProblemType

ROOT = Path(__file__).resolve().parent.parent


def _bert(ptype: ProblemType, labels: int) -> BertForSequenceClassification:
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     num_labels=labels, problem_type=str(ptype))
    return BertForSequenceClassification(cfg).eval()


@pytest.mark.parametrize("ptype,labels,target", [
    (ProblemType.SINGLE, 3, 2),
    (ProblemType.MULTI, 3, [1.0, 0.0, 1.0]),
    (ProblemType.REGRESSION, 1, [0.7]),
])
def test_problem_type_loss_output_and_prediction_are_hfs(ptype, labels, target):
    """HF's BertForSequenceClassification with problem_type set computes the enum's loss class, and the
    enum's loss, probabilities and prediction read its logits the way HF's rules do."""
    model = _bert(ptype, labels)
    ids = torch.tensor([[1, 5, 7, 2]])
    y = torch.tensor([target]) if ptype is ProblemType.SINGLE else torch.tensor([target], dtype=torch.float32)
    with torch.no_grad():
        out = model(input_ids=ids, labels=y)
    logits = out.logits[0].numpy()
    assert P.problem_type(model.config) is ptype and ptype == model.config.problem_type  # equals HF's string
    assert P.loss(logits, target, ptype) == pytest.approx(float(out.loss), rel=1e-5)
    assert float(ptype.batch_loss(out.logits, y if ptype is not ProblemType.REGRESSION else y[:, 0])) == \
        pytest.approx(float(out.loss), rel=1e-5)
    expected = {ProblemType.SINGLE: torch.softmax(out.logits, -1), ProblemType.MULTI: torch.sigmoid(out.logits),
                ProblemType.REGRESSION: out.logits}[ptype][0].numpy()
    assert ptype.output == {ProblemType.SINGLE: "softmax", ProblemType.MULTI: "sigmoid"}.get(ptype, "none")
    np.testing.assert_allclose(ptype.probabilities(logits), expected, rtol=1e-5, atol=1e-6)
    names = tuple(f"l{i}" for i in range(labels))
    if ptype is ProblemType.MULTI:  # the labels over 0.5, none when none is
        assert ptype.predict(logits, names) == tuple(names[i] for i in np.flatnonzero(expected > 0.5))
    elif ptype is ProblemType.REGRESSION:  # the value, never a label's name
        assert ptype.predict(logits, names) == pytest.approx(float(logits[0]))
    else:
        assert ptype.predict(logits, names) == names[int(logits.argmax())]
    assert type(ptype.loss_class()).__name__ == ptype.loss_name


def test_problem_type_rule_without_config_problem_type():
    """HF's default: regression for one output, single-label otherwise; the member is its string."""
    assert P.problem_type(BertConfig(num_labels=1)) is ProblemType.REGRESSION
    assert P.problem_type(BertConfig(num_labels=4)) is ProblemType.SINGLE
    assert ProblemType.MULTI == "multi_label_classification" and f"k_{ProblemType.SINGLE}" == \
        "k_single_label_classification"


def test_last_token_pooling_reads_what_hfs_decoder_classifier_reads():
    """A padded batch through GPT2ForSequenceClassification: its logits are the score layer at
    pooling.last_token (HF's rule on the ids) and at pooling.last (padding read from the mask)."""
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=40, n_embd=16, n_layer=1, n_head=2, n_positions=16, num_labels=3, pad_token_id=0)
    model = GPT2ForSequenceClassification(cfg).eval()
    ids = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0], [5, 0, 7, 0, 0]])  # a pad id inside row 2
    mask = (ids != 0).long()
    mask[2, 1] = 1  # the inner pad is a real token to the mask; the model still skips it
    with torch.no_grad():
        hidden = model.transformer(input_ids=ids, attention_mask=mask).last_hidden_state  # (3, 5, 16)
        want = model(input_ids=ids, attention_mask=mask).logits
    pad = pooling.pad_id(model.config)
    assert pooling.last_token(ids, pad).tolist() == [4, 2, 2]
    got = model.score(hidden[torch.arange(3), pooling.last_token(ids, pad)])
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(model.score(pooling.last(hidden, mask, pad, ids)), want)
    # Without ids the mask alone ends each row; a tokenizer's other fill id still counts as padding.
    assert pooling.last_index(mask, pad).tolist() == [4, 2, 2]
    assert pooling.last_index(mask, pad, ids.masked_fill(mask == 0, 39)).tolist() == [4, 2, 2]
    assert pooling.pad_id(GPT2Config(pad_token_id=None)) == -1


def test_mean_and_first_pooling():
    hidden = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]])
    torch.testing.assert_close(pooling.mean(hidden, mask), torch.stack([hidden[0, :2].mean(0), torch.zeros(4)]))
    torch.testing.assert_close(pooling.first(hidden), hidden[:, 0])


def test_confusion_counts_match_a_hand_count_rectangular():
    rng = np.random.default_rng(0)
    true, pred = rng.integers(0, 4, 200), rng.integers(0, 6, 200)
    hand = np.zeros((4, 6), np.int64)
    np.add.at(hand, (true, pred), 1)
    got = P.confusion_counts(true, pred, 4, 6)
    assert got.dtype == np.int64 and np.array_equal(got, hand)
    assert np.array_equal(P.confusion_counts(true, true, 4), np.diag(np.bincount(true, minlength=4)))
    assert P.confusion(ProblemType.MULTI, np.zeros((2, 2)), np.zeros((2, 2)), 2) is None


LITERAL = re.compile(r"""["'](single_label_classification|multi_label_classification|regression)["']""")
# The one place a literal may stand outside problem.py: the quiz question about regression is named
# "regression" (its i18n keys), not a problem type.
ALLOWED = {"explorer/teach/lesson.py": {'Question("regression", 2, "pages/logits.py", "probabilities")'}}


def test_problem_type_strings_live_only_in_problem_py():
    found = []
    for path in [*ROOT.glob("explorer/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py", *ROOT.glob("bench/*.py")]:
        rel = path.relative_to(ROOT).as_posix()
        if rel == "explorer/model/problem.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if LITERAL.search(line) and not any(a in line for a in ALLOWED.get(rel, ())):
                found.append(f"{rel}: {line.strip()}")
    assert not found, "problem-type literals outside explorer/model/problem.py:\n" + "\n".join(found)


def test_one_home_for_pooling_sampling_and_features():
    """The last-non-pad rule, dropout sampling and the feature cache each have one definition, and the
    audit imports nothing from train/."""
    sources = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in ROOT.glob("explorer/**/*.py")}
    homes = {r"def last_token\(": "explorer/model/pooling.py", r"def pad_id\(": "explorer/model/pooling.py",
             r"torch\.rand\(": "explorer/model/sampling.py", r"def cached_features\(": "explorer/model/features.py",
             r"def confusion_counts\(|np\.add\.at\(": "explorer/model/problem.py",
             r"def metrics\(": "explorer/model/problem.py"}
    for pattern, home in homes.items():
        where = sorted(p for p, s in sources.items() if re.search(pattern, s))
        assert where == [home], (pattern, where)
    assert "explorer.train" not in sources["explorer/data/audit.py"]
    pages = "\n".join(p.read_text(encoding="utf-8") for p in ROOT.glob("pages/*.py"))
    assert "np.add.at(" not in pages


def test_compare_functions_have_distinct_names():
    from explorer.explain import compare, faithfulness, whatif

    assert not any(hasattr(m, "compare") for m in (compare, faithfulness, whatif))
    assert callable(compare.compare_heads) and callable(whatif.compare_texts) and callable(faithfulness.compare_methods)
