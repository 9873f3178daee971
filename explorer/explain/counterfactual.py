"""Counterfactuals: the smallest set of word edits (deletions, substitutions) that flips a prediction, and how the
head saw the change.

Words are the tokenizer's own (its word ids, as the What-if page groups them), on either side of a sentence pair.
Each edit is a span of the ORIGINAL text: a deletion spans its word and the whitespace after it (so no two edits'
spans ever overlap, and applying any subset of them is plain string work: `apply_edits`); a substitution spans the
word alone. The search runs batched forward passes (whatif.batch_logits, under the sdpa kernel):

1. every word deleted alone: leave-one-out, which ranks the words (`loo_order`, LIT's ablation-flip rule);
2. for 1..max_edits edits: first the deletions of every combination of the ten best-ranked words (what LIT's
   ablation flip tries), then, only where none flips, a beam: the best non-flipping sets one edit smaller, each
   grown by one deletion of a top word or one substitution. Substitutions come from the embedding gradient of the
   margin (HotFlip's first-order estimate) at each word's first token, over the whole words of the vocabulary;
3. the flip found is shrunk to its smallest flipping subset, all subsets checked by forward passes, so no strict
   subset of the returned edits flips (`minimal`). A search that finds no flip returns the closest set it tried.

So it flips every text the ablation flip flips, with no more edits: its first candidates are the same.
"""
from __future__ import annotations

import itertools
import time
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.explain.attribution import Forward, embed_ids
from explorer.explain.whatif import batch_logits
from explorer.model import analysis as analysis_core
from explorer.model.analysis import Analysis, encode, token_info
from explorer.model.checkpoints import TOKEN_CLASSIFICATION, Checkpoint
from explorer.model.heads import Head, is_per_token
from explorer.model.kernel import attention_kernel
from explorer.model.problem import ProblemType
from explorer.model.steps import Op
from explorer.results import JsonResult, html_table, rounded
from explorer.runtime.jobs import Progress
from explorer.text.errors import ExplorerError
from explorer.text.plain import html as escape_html

MAX_EDITS = 10  # subsets checked for minimality grow as 2**edits
TOP_WORDS = 10  # LIT's ablation flip: combinations of the ten words leave-one-out ranks highest
SUBSTITUTIONS = 30  # single substitutions the gradient proposes, best first
PER_WORD = 3  # of which at most this many for one word
BEAM = 8  # non-flipping sets of one size grown to the next
# A flip counts when its margin clears this many logits: padded batches and a lone forward agree to float32
# rounding (about 1e-6 here), so a claimed flip is a flip by a plain forward of the returned text too.
SURE = 1e-4
SIDES = ("text", "text_pair")


class CounterfactualError(ExplorerError):
    """A counterfactual cannot be searched for; the message is one line, meant for the user."""


@dataclass(frozen=True, order=True)
class Edit:
    side: int  # 0: the text, 1: a sentence pair's second text
    start: int  # character span of the original side
    end: int
    old: str
    new: str  # "" for a deletion

    @property
    def kind(self) -> str:
        return "delete" if not self.new else "replace"

    def to_dict(self) -> dict:
        return {"side": SIDES[self.side], "start": self.start, "end": self.end, "old": self.old, "new": self.new,
                "kind": self.kind}


def apply_edits(text: str, edits, *, side: int = 0) -> str:
    """`text` with those of `edits` on `side` applied.

    Their spans never overlap, so any order gives the same.

    Args:
        text: the original text of that side.
        edits: Edits (a Counterfactual's `edits`).
        side: 0 for the text, 1 for the second text of a pair.

    Returns:
        The edited text.
    """
    for e in sorted((e for e in edits if e.side == side), key=lambda e: -e.start):
        text = text[:e.start] + e.new + text[e.end:]
    return text


@dataclass(frozen=True)
class Slot:
    """One word the model reads: where it is, and where its deletion ends (after the whitespace that follows it)."""
    side: int
    start: int
    end: int
    cut: int
    token: int  # its first token's position in the encoding
    text: str

    def deletion(self) -> Edit:
        return Edit(self.side, self.start, self.cut, self.text, "")

    def substitution(self, word: str) -> Edit:
        return Edit(self.side, self.start, self.end, self.text, word)


def word_slots(ck: Checkpoint, text: str, *, text_pair: str = "") -> tuple[list[Slot], dict, list[int]]:
    """The words of both sides that the model reads (after truncation), the encoding and its ids."""
    enc, _ = encode(ck, text, text_pair or None)
    ids, special, word_ids = token_info(ck, enc)
    texts = (text, text_pair)
    try:
        seqs = enc.sequence_ids(0)
    except (ValueError, AttributeError):  # a slow tokenizer: no offsets to cut words at
        raise CounterfactualError("counterfactual_no_offsets", name=ck.name) from None
    slots, seen = [], set()
    for pos, (wid, side) in enumerate(zip(word_ids, seqs)):
        if wid is None or side is None or special[pos] or (side, wid) in seen:
            continue
        seen.add((side, wid))
        span = enc.word_to_chars(0, wid, sequence_index=side)
        if span is None or span.end <= span.start:
            continue
        source = texts[side]
        cut = span.end
        while cut < len(source) and source[cut].isspace():
            cut += 1
        slots.append(Slot(side, span.start, span.end, cut, pos, source[span.start:span.end]))
    return slots, enc, ids


# ---- what counts as a flip ----------------------------------------------------------------------

@dataclass(frozen=True)
class Goal:
    """What the search moves toward, by the problem type's rule (problem.py): single-label, another label than
    the predicted one (or `target`); multi-label, another set of labels over 0.5 (or `target` in or out of it)."""
    ptype: ProblemType
    labels: tuple[str, ...]
    logits: np.ndarray  # (labels,) the original text's
    target: int | None

    @property
    def predicted(self) -> int:
        return int(np.argmax(self.logits))

    def margin(self, logits: torch.Tensor) -> torch.Tensor:
        """(n, labels) -> (n,): positive exactly where the row's prediction has flipped the way asked."""
        z = logits.double()
        if self.ptype is ProblemType.MULTI:
            sign = torch.as_tensor(np.where(self.logits > 0, -1.0, 1.0), dtype=z.dtype, device=z.device)
            toggled = z * sign  # > 0: that label left (or joined) the predicted set
            return toggled[:, self.target] if self.target is not None else toggled.max(-1).values
        keep = self.predicted if self.target is None else self.target
        others = torch.cat([z[:, :keep], z[:, keep + 1:]], dim=1).max(-1).values
        return others - z[:, keep] if self.target is None else z[:, keep] - others

    def margins(self, logits: np.ndarray) -> np.ndarray:
        return self.margin(torch.from_numpy(np.asarray(logits, np.float64))).numpy()

    def progress(self, logits: np.ndarray) -> np.ndarray:
        """(n, labels) -> (n,) how far toward a flip, to rank words: LIT's leave-one-out quantity, minus the
        predicted label's probability (the asked label's probability with `target`); the margin for multi-label."""
        if self.ptype is ProblemType.MULTI:
            return self.margins(logits)
        p = self.ptype.probabilities(np.asarray(logits, np.float64))
        return p[:, self.target] if self.target is not None else -p[:, self.predicted]


def goal_for(a: Analysis, target: int | None) -> Goal:
    if a.problem_type is ProblemType.REGRESSION:
        raise CounterfactualError("counterfactual_regression")
    if target is not None and a.problem_type is ProblemType.SINGLE and target == int(np.argmax(a.logits)):
        raise CounterfactualError("counterfactual_target_predicted", label=a.labels[target])
    return Goal(a.problem_type, a.labels, np.asarray(a.logits, np.float64), target)


def loo_order(goal: Goal, base: np.ndarray, *, deleted: np.ndarray) -> np.ndarray:
    """Word indices, the deletion that moves furthest toward the flip first (leave-one-out); ties by position."""
    gain = goal.progress(deleted) - goal.progress(base[None])[0]
    return np.argsort(-gain, kind="stable")


# ---- the forward passes -------------------------------------------------------------------------

class Runs:
    """Edit sets -> logits of the edited texts, each set run once, in padded batches; counts the rows run."""

    def __init__(self, ck: Checkpoint, head: Head, text: str, text_pair: str, goal: Goal,
                 progress: Progress | None = None):
        self.ck, self.head, self.text, self.text_pair, self.goal = ck, head, text, text_pair, goal
        self.logits: dict[frozenset, np.ndarray] = {}
        self.forwards = 0
        self.progress = progress

    def texts(self, edits) -> tuple[str, str]:
        return apply_edits(self.text, edits, side=0), apply_edits(self.text_pair, edits, side=1)

    def run(self, sets) -> list[np.ndarray]:
        new = list(dict.fromkeys(s for s in sets if s not in self.logits))
        if new:
            pairs = [self.texts(s) for s in new]
            with attention_kernel(self.ck, "sdpa"):  # no attention weights read: the fast kernel
                got = batch_logits(self.ck, self.head, texts=[a for a, _ in pairs],
                                   text_pair=[b for _, b in pairs] if self.text_pair else "")
            self.forwards += len(new)
            self.logits.update(zip(new, got))
        return [self.logits[s] for s in sets]

    def margins(self, sets) -> np.ndarray:
        return self.goal.margins(np.stack(self.run(sets))) if sets else np.zeros(0)

    def tick(self, fraction: float, message: str) -> None:
        """Progress: `message` is only numbers (edits tried of the most), so each front end words it its own way."""
        if self.progress is not None:
            self.progress(fraction, message)


# ---- substitutions ------------------------------------------------------------------------------

_WHOLE_WORDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def whole_words(tokenizer) -> tuple[np.ndarray, list[str]]:
    """The vocabulary's ids that are whole words of letters, and each word: WordPiece's pieces without "##",
    byte-level BPE's "Ġ" pieces and SentencePiece's "▁" pieces (their word starts), two letters or more.
    Kept per tokenizer: reading a 50,000-token vocabulary takes a while."""
    if tokenizer in _WHOLE_WORDS:
        return _WHOLE_WORDS[tokenizer]
    vocab = tokenizer.get_vocab()
    special = set(tokenizer.all_special_ids)
    pieces = list(vocab)
    marker = next((m for m in ("Ġ", "▁") if sum(p.startswith(m) for p in pieces) > len(pieces) // 10), None)
    ids, words = [], []
    for piece, i in vocab.items():
        if i in special:
            continue
        if marker is not None:
            if not piece.startswith(marker):
                continue
            piece = piece[len(marker):]
        elif piece.startswith("##"):
            continue
        if len(piece) >= 2 and piece.isalpha():
            ids.append(i)
            words.append(piece)
    found = (np.asarray(ids, np.int64), words)
    _WHOLE_WORDS[tokenizer] = found
    return found


def substitutions(ck: Checkpoint, head: Head, *, enc, ids: list[int], slots: list[Slot], goal: Goal,
                  limit: int = SUBSTITUTIONS, per_word: int = PER_WORD) -> list[Edit]:
    """Single-word substitutions, best first by the first-order change in the margin (HotFlip): swapping the
    word's first token embedding x for a whole word's e moves the margin by about (e - x) · ∂margin/∂x."""
    if not slots:
        return []
    vocab, words = whole_words(ck.tokenizer)
    if not len(vocab):
        return []
    forward = Forward(ck, head, 0, "logit", None, enc)
    x = embed_ids(ck, ids).requires_grad_(True)  # (1, seq, hidden)
    with torch.enable_grad():
        goal.margin(forward.logits(x))[0].backward()
    pos = torch.tensor([s.token for s in slots], device=x.device)
    grad = x.grad[0, pos].double()  # (words, hidden)
    table = ck.model.get_input_embeddings().weight.detach()[torch.as_tensor(vocab, device=x.device)].double()
    gain = (table @ grad.T - (x.detach()[0, pos].double() * grad).sum(-1)).cpu().numpy()  # (vocab, words)
    found: list[tuple[float, int, int]] = []
    for k, slot in enumerate(slots):
        old = slot.text.lower()
        best = np.argsort(-gain[:, k], kind="stable")
        picked = [j for j in best[:per_word + 2] if words[j].lower() != old][:per_word]
        found += [(float(gain[j, k]), k, int(j)) for j in picked]
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return [slots[k].substitution(words[j]) for _, k, j in found[:limit]]


# ---- the search ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SearchResult:
    edits: frozenset
    flipped: bool
    minimal: bool
    forwards: int


def _words_left(edits, counts: dict[int, int]) -> bool:
    """A set never deletes every word of a side: an empty text is no text to classify."""
    gone = {s: 0 for s in counts}
    for e in edits:
        if e.kind == "delete":
            gone[e.side] += 1
    return all(gone[s] < counts[s] for s in counts)


def _one_per_word(edits) -> bool:
    return len({(e.side, e.start) for e in edits}) == len(edits)


def search(ck: Checkpoint, head: Head, *, text: str, text_pair: str, goal: Goal, max_edits: int,
           progress: Progress | None = None, seed: int = 0) -> SearchResult:
    """The smallest edit set found that flips `goal` (module docstring), shrunk to a minimal one; or, when
    nothing within `max_edits` flips, the closest set tried. `seed` breaks ties between equally good sets."""
    slots, enc, ids = word_slots(ck, text, text_pair=text_pair)
    runs = Runs(ck, head, text, text_pair, goal, progress)
    counts = {s: sum(1 for w in slots if w.side == s) for s in {w.side for w in slots}}
    ok = lambda edits: _one_per_word(edits) and _words_left(edits, counts)  # noqa: E731
    base = runs.run([frozenset()])[0]
    # Leave-one-out run here, not by whatif.leave_one_out: that one glues the text around each cut word
    # (whatif._cut), which two cuts cannot share, while these deletions are spans that any subset applies.
    singles = [frozenset([w.deletion()]) for w in slots if ok([w.deletion()])]
    runs.tick(0.05, "")
    order = loo_order(goal, base, deleted=np.stack(runs.run(singles))) if singles else np.zeros(0, int)
    top = [next(iter(singles[k])) for k in order[:TOP_WORDS]]
    runs.tick(0.15, "")
    subs = substitutions(ck, head, enc=enc, ids=ids, slots=slots, goal=goal)
    runs.forwards += 1  # the gradient's forward (and backward)
    rng = np.random.default_rng(seed)
    tried: dict[frozenset, float] = {}

    def measure(sets) -> list[frozenset]:
        sets = [s for s in dict.fromkeys(sets) if ok(s)]
        for s, m in zip(sets, runs.margins(sets)):
            tried[s] = float(m)
        return [s for s in sets if tried[s] > SURE]

    def best(sets):  # most margin, then fewest substitutions, then a seeded draw
        noise = rng.random(len(sets))
        return min(zip(sets, noise), key=lambda sn: (-tried[sn[0]], sum(e.kind == "replace" for e in sn[0]), sn[1]))[0]

    flips: list[frozenset] = []
    beam: list[frozenset] = [frozenset()]
    for size in range(1, max_edits + 1):
        runs.tick(0.15 + 0.7 * (size - 1) / max_edits, f"{size}/{max_edits}")
        if size == 1:
            flips = measure(singles)  # every word, the ten LIT tries among them
        else:
            flips = measure([frozenset(c) for c in itertools.combinations(top, size)])
        if flips:
            break
        grown = [s | {e} for s in beam for e in top + subs if e not in s]
        flips = measure([s for s in grown if len(s) == size])
        if flips:
            break
        level = sorted((s for s in tried if len(s) == size), key=lambda s: -tried[s])
        beam = level[:BEAM]
        if not beam:
            break
    runs.tick(0.9, "")
    if not flips:
        closest = best(list(tried)) if tried else frozenset()
        return SearchResult(closest, False, False, runs.forwards)
    found = best(flips)
    return _shrunk(found, runs, measure, best)


def _shrunk(found: frozenset, runs: Runs, measure, best) -> SearchResult:
    """`found`'s smallest flipping subset (every strict subset run); minimal when none of that one's own strict
    subsets comes even near a flip (within SURE of it, either side)."""
    edits = sorted(found)
    subsets = [frozenset(c) for r in range(1, len(edits)) for c in itertools.combinations(edits, r)]
    flipping = measure(subsets) + [found]
    size = min(len(s) for s in flipping)
    chosen = best([s for s in flipping if len(s) == size])
    under = [frozenset(c) for r in range(len(chosen)) for c in itertools.combinations(sorted(chosen), r)]
    minimal = bool(np.all(runs.margins(under) <= -SURE)) if under else True
    return SearchResult(chosen, True, minimal, runs.forwards)


# ---- how the head saw it ------------------------------------------------------------------------

def head_changes(head: Head, before: Analysis, *, after: Analysis, top: int = 10) -> dict:
    """The head's steps on both texts (the replay analyze runs): each step's vector before and after, how far it
    moved; each label's logit change; and, where the last step is a linear layer, each label's change split over
    the features of its input (weight × change: they sum to the logit change, the bias cancelling)."""
    steps = []
    for (name, a), (_, b) in zip(before.steps, after.steps):
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
        na, nb = np.linalg.norm(a64), np.linalg.norm(b64)
        steps.append({"name": name, "before": rounded(a64), "after": rounded(b64),
                      "change_norm": float(np.linalg.norm(b64 - a64)),
                      "cosine": float(a64 @ b64 / (na * nb)) if na and nb else None})
    change = np.asarray(after.logits, np.float64) - np.asarray(before.logits, np.float64)
    view = {"pooled": {"step": steps[0]["name"], "before": steps[0]["before"], "after": steps[0]["after"]},
            "steps": steps, "logits_before": rounded(before.logits), "logits_after": rounded(after.logits),
            "logit_change": dict(zip(before.labels, rounded(change))), "last_step": None}
    last = head.steps[-1]
    if last.op == Op.LINEAR and last.slot in head.layers and len(before.steps) > 1:
        weight = head.layers[last.slot].weight.detach().double().cpu().numpy()  # (labels, features)
        delta = np.asarray(after.steps[-2][1], np.float64) - np.asarray(before.steps[-2][1], np.float64)
        parts = weight * delta  # (labels, features)
        split = {}
        for k, label in enumerate(before.labels):
            order = np.argsort(-np.abs(parts[k]), kind="stable")[:top]
            split[label] = {"total": float(parts[k].sum()),
                            "features": [{"feature": int(f), "change": float(delta[f]), "weight": float(weight[k, f]),
                                          "contribution": float(parts[k, f])} for f in order]}
        view["last_step"] = {"step": last.name, "input": before.steps[-2][0], "labels": split}
    return view


# ---- the result ---------------------------------------------------------------------------------

_DEL = "background:#fde0dd;color:#99000d;text-decoration:line-through"
_INS = "background:#e5f5e0;color:#00441b"


def marked_html(text: str, edits, *, side: int = 0) -> str:
    """`text` with its edits marked: a deleted word struck through (red), a replaced word struck through and its
    new word after it (green); every piece escaped."""
    out, at = [], 0
    for e in sorted(e for e in edits if e.side == side):
        out.append(escape_html(text[at:e.start]))
        out.append(f"<del class='cf-delete' style='{_DEL}'>{escape_html(e.old)}</del>")
        if e.new:
            out.append(f" <ins class='cf-replace' style='{_INS}'>{escape_html(e.new)}</ins>")
        out.append(escape_html(text[e.start + len(e.old):e.end]))
        at = e.end
    out.append(escape_html(text[at:]))
    return f"<div style='font-family:sans-serif;line-height:1.9'>{''.join(out)}</div>"


@dataclass(frozen=True, eq=False)
class Counterfactual(JsonResult):
    checkpoint: str
    head_kind: str
    original: str
    original_pair: str
    text: str  # the original with its edits applied
    text_pair: str
    edits: tuple[Edit, ...]
    flipped: bool  # by a plain forward of `text` (and `text_pair`)
    minimal: bool  # flipped, and no strict subset of the edits flips (checked by forward passes)
    labels: tuple[str, ...]
    problem_type: ProblemType
    target: int | None
    before: np.ndarray  # (labels,) by the problem type's rule (softmax, sigmoid)
    after: np.ndarray  # (labels,)
    predicted_before: object  # the problem type's prediction: a label, or a tuple of labels
    predicted_after: object
    max_edits: int
    forward_passes: int
    seconds: float
    head: dict = field(default_factory=dict)  # head_changes

    def to_dict(self) -> dict:
        def shown(p):
            return list(p) if isinstance(p, tuple) else p

        return {"checkpoint": self.checkpoint, "head_kind": self.head_kind, "original": self.original,
                "original_pair": self.original_pair, "text": self.text, "text_pair": self.text_pair,
                "edits": [e.to_dict() for e in self.edits], "flipped": self.flipped, "minimal": self.minimal,
                "labels": list(self.labels), "problem_type": str(self.problem_type),
                "target": None if self.target is None else self.labels[self.target],
                "before": rounded(self.before), "after": rounded(self.after),
                "predicted_before": shown(self.predicted_before), "predicted_after": shown(self.predicted_after),
                "max_edits": self.max_edits, "forward_passes": self.forward_passes,
                "seconds": round(self.seconds, 3), "head": self.head}

    def marked_html(self, side: int = 0) -> str:
        """One side's original text with the edits marked (deletions struck, substitutions beside them).

        Args:
            side: 0 for the text, 1 for the second text of a pair.

        Returns:
            An HTML fragment, every user text escaped.
        """
        return marked_html(self.original_pair if side else self.original, self.edits, side=side)

    def _repr_html_(self) -> str:
        verdict = "flipped" if self.flipped else f"no flip within {self.max_edits} edits (closest)"
        rows = [{"label": n, "before": float(b), "after": float(a)} for n, b, a in zip(self.labels, self.before, self.after)]
        pair = self.marked_html(1) if self.original_pair else ""
        return (f"<p><b>{escape_html(verdict)}</b>: {len(self.edits)} edits, {self.forward_passes} forward passes</p>"
                + self.marked_html(0) + pair + html_table(rows))

    def save_html(self, path):
        """Write the result as a standalone page (UTF-8).

        Args:
            path: the file to write.

        Returns:
            The path.
        """
        from explorer.results import HTML

        page = ("<!doctype html><html><head><meta charset='utf-8'><title>Counterfactual</title></head><body>"
                + self._repr_html_() + "</body></html>")
        return HTML(page, "Counterfactual").save(path)


def counterfactual(ck: Checkpoint, head: Head, *, text: str, text_pair: str = "", target: int | None = None,
                   max_edits: int = 3, seed: int = 0, progress: Progress | None = None) -> Counterfactual:
    """The smallest edit found that flips `text`'s prediction (to `target` where given), checked by a plain forward
    of the edited text, with the head's view of the change. Token classifiers are refused."""
    if ck.task == TOKEN_CLASSIFICATION or is_per_token(head):
        raise CounterfactualError("counterfactual_token_model", name=ck.name)
    start = time.perf_counter()
    before = analysis_core.analyze(ck, head, text, text_pair=text_pair or None)
    goal = goal_for(before, target)
    found = search(ck, head, text=text, text_pair=text_pair or "", goal=goal, max_edits=max_edits, progress=progress,
                   seed=seed)
    edits = tuple(sorted(found.edits))
    new_text, new_pair = apply_edits(text, edits, side=0), apply_edits(text_pair or "", edits, side=1)
    after = analysis_core.analyze(ck, head, new_text, text_pair=new_pair or None)  # forward_passes counts both
    flipped = bool(goal.margins(np.asarray(after.logits)[None])[0] > 0) and bool(edits)
    if progress is not None:
        progress(1.0, "")
    return Counterfactual(
        checkpoint=ck.name, head_kind=head.kind, original=text, original_pair=text_pair or "", text=new_text,
        text_pair=new_pair, edits=edits, flipped=flipped, minimal=found.minimal and flipped, labels=before.labels,
        problem_type=before.problem_type, target=target, before=before.scores, after=after.scores,
        predicted_before=before.predicted, predicted_after=after.predicted, max_edits=max_edits,
        forward_passes=found.forwards + 2, seconds=time.perf_counter() - start,
        head=head_changes(head, before, after=after))
