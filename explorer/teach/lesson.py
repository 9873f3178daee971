"""The guided lesson and the review quiz: structure and the small computations behind their panels.

The words live in the assets/locale catalogs under the keys "lesson.*" and "quiz.*"; this module holds only
keys, the order of the steps, the answers, and the numbers the panels show.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.model.tokens import cosine

# The chain, in teaching order. Each step has lesson.<key>.title / .body strings and one live panel.
STEPS: tuple[str, ...] = (
    "tokenizer", "encoder", "cls", "head", "probabilities", "new_head", "finetuning", "token_heads",
    "layers", "ablation",
)


@dataclass(frozen=True)
class Question:
    key: str  # quiz.<key>.question, quiz.<key>.options (list joined by '|'), quiz.<key>.why
    correct: int  # index of the right option
    page: str  # the page that shows the answer live
    step: str  # the lesson step that explains it


QUIZ: tuple[Question, ...] = (
    Question("what_head", 1, "pages/compare.py", "head"),
    Question("why_cls", 2, "pages/tokens.py", "cls"),
    Question("logits", 0, "pages/logits.py", "probabilities"),
    Question("new_head", 1, "pages/home.py", "new_head"),
    Question("token_vs_seq", 2, "pages/lesson.py", "token_heads"),
    Question("first_token", 0, "pages/tokens.py", "cls"),
    Question("dropout", 1, "pages/dropout.py", "head"),
    Question("pooler", 0, "pages/pooled.py", "head"),
    Question("regression", 2, "pages/logits.py", "probabilities"),
    Question("multilabel", 1, "pages/logits.py", "probabilities"),
    Question("decision_layer", 1, "pages/encoder.py", "layers"),
    Question("drop_word", 2, "pages/whatif.py", "ablation"),
)


N_OPTIONS = 4  # every question: quiz.<key>.o0 … o3


def is_correct(question: Question, choice: int | None) -> bool:
    return choice is not None and int(choice) == question.correct


def first_answers_text(first: dict[str, int]) -> str:
    """First answers ({question key: option index}) as a cookie's value: `key-option` pairs joined by dots,
    characters a cookie's value may hold without quoting; a key this quiz does not have is left out."""
    keys = {q.key for q in QUIZ}
    return ".".join(f"{k}-{int(v)}" for k, v in first.items() if k in keys)


def read_first_answers(text: str) -> dict[str, int]:
    """The first answers in a cookie's value (first_answers_text). The browser keeps it, so anyone can write it:
    a pair naming a question this quiz does not have, or an option out of range, is left out."""
    keys, out = {q.key for q in QUIZ}, {}
    for pair in text.split("."):
        key, _, option = pair.rpartition("-")
        if key in keys and option.isdigit() and int(option) < N_OPTIONS:
            out.setdefault(key, int(option))
    return out


def option_order(question: int, seed: int) -> tuple[int, ...]:
    """The order one session shows question number `question`'s options in: a permutation of
    range(N_OPTIONS), fixed by (seed, question), so the right answer's place tells nothing and a page
    rerun keeps it. The catalogs write each right answer at a fixed index; this is what hides it."""
    return tuple(int(i) for i in np.random.default_rng([seed, question]).permutation(N_OPTIONS))


def quiz_score(answers: dict[str, int]) -> int:
    """How many of `answers` ({question key: option index}) are right."""
    return sum(is_correct(q, answers.get(q.key)) for q in QUIZ)


def cls_similarity(hidden_states: np.ndarray, special: tuple[bool, ...]) -> dict[str, np.ndarray]:
    """Per layer, how the first-token vector relates to the words: (layers+1,) each.

    `to_first_word`: cosine with the first real word's vector; `to_mean`: cosine with the mean of
    the real tokens. A first-token vector that tracks the mean, not the first word, is a summary.
    """
    words = [i for i, s in enumerate(special) if not s]  # hidden_states: (layers+1, seq, hidden)
    if not words:
        zeros = np.zeros(hidden_states.shape[0])
        return {"to_first_word": zeros, "to_mean": zeros}
    first = words[0]
    return {
        "to_first_word": np.array([cosine(h[0], h[first]) for h in hidden_states]),
        "to_mean": np.array([cosine(h[0], h[words].mean(0)) for h in hidden_states]),
    }


def token_head_logits(hidden: np.ndarray, num_labels: int, seed: int = 0) -> np.ndarray:
    """A token-classification head on the same encoder: one new linear layer applied to every
    token, (seq, hidden) -> (seq, labels). Seeded like every new head, so it is random but stable."""
    gen = torch.Generator().manual_seed(seed)
    weight = torch.randn(num_labels, hidden.shape[-1], generator=gen) * 0.02
    return (torch.as_tensor(hidden, dtype=torch.float32) @ weight.T).numpy()


def head_step_sizes(model, head) -> list[tuple[str, int]]:
    """Each step of `head` (on `model`'s encoder output) and the size of the vector it gives a token: the head run
    on one zero vector, since only the shapes are shown (run_head is the one definition of the steps)."""
    from explorer.model.heads import run_head

    zero = torch.zeros(1, 1, model.config.hidden_size, dtype=model.dtype, device=model.device)  # (batch, seq, hidden)
    with torch.inference_mode():
        steps = run_head(head, zero, torch.ones(1, 1, dtype=torch.long, device=model.device))
    return [(name, v.shape[-1]) for name, v in steps]


def parameter_counts(model, head) -> dict[str, int]:
    """Encoder parameters versus head parameters: what fine-tuning updates versus what a frozen
    encoder (feature extraction) leaves to train."""
    encoder = sum(p.numel() for p in model.base_model.parameters())
    if model.config.model_type == "bert" and getattr(model.base_model, "pooler", None) is not None:
        encoder -= sum(p.numel() for p in model.base_model.pooler.parameters())  # counted in the head
    head_params = sum(r["params"] for r in head.parameters_table())
    return {"encoder": int(encoder), "head": int(head_params)}
