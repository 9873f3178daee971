"""Explanations of a whole dataset: which words drive each label, possible shortcuts, and how far each
attribution method can be trusted on this model (faithfulness, agreement, annotators' rationales).

Every row is explained for its predicted label with each method (`attribute_many`: lig's points of many
texts share batches, each text refined to 1%); rows whose given label differs are also explained for the
given label with the first method. Words are the readable words of explorer/model/readable.py (a word's
pieces merged, specials left out), so "zqx" is one word however it splits.

Words per label: the words significantly tied to the predicted label (chi-squared, Benjamini-Hochberg) come first,
by their total score; words every label shares after. A shortcut follows the scan's one rule
(explorer.data.words.word_ties): a tied word whose rows carry the model's errors against the given labels; words
the labels tie to the label as the model does are what drives it. Without given labels the two cannot be told
apart, and no word is called a shortcut.

Measures, per method, over the rows (each a mean over rows):
- Faithfulness, ERASER's (DeYoung et al., 2020): comprehensiveness is the predicted label's probability
  drop when the top k% of the words (every token of each) are deleted, sufficiency the drop when only
  they (and the special tokens) are kept; each averaged over k in FRACTIONS (AOPC, ERASER's bins 1, 5,
  10, 20, 50%; at least one word per bin). The random baseline ranks the words at random (seeded per row):
  one ranking per row, the same for every method, which is what each method's numbers are compared with.
- Agreement: Kendall's tau (scipy.stats.kendalltau, tau-b) between two methods' word scores of a row.
- Rationales (when the data marks words), ferret's plausibility measures (Attanasio et al., 2023, after
  ERASER): the method's discrete rationale is its top-k words, k the row's number of marked words; token F1
  is their F1 against the marked words, IOU F1 the share of rows whose intersection over union is at least
  0.5 (ERASER's partial match, one rationale per row, so precision = recall), AUPRC the average precision
  of the word scores against the marks (sklearn.metrics.average_precision_score). Rows with no mark are
  left out of these.

Under `accelerate launch --num_processes N` (or torchrun) each process explains a contiguous share of the
rows and the per-row results are gathered (accelerate.utils.gather_object), so every process ends with
what one process computes (lig's batches differ, which moves a score by float rounding only).
"""
from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from explorer.data.dataset import DataError
from explorer.data.words import SHORTCUT, TIE_ALPHA, word_matrix, word_ties
from explorer.explain import batched
from explorer.explain.attribution import ALIASES, METHODS, Attribution
from explorer.explain.faithfulness import aopc, erasures, model_prob
from explorer.model.checkpoints import Checkpoint, forward_inputs
from explorer.model.heads import Head
from explorer.model.problem import ProblemType
from explorer.model.readable import word_index, word_pieces
from explorer.results import JsonResult
from explorer.runtime import budget
from explorer.runtime.jobs import Progress, span
from explorer.text import i18n

FRACTIONS = (0.01, 0.05, 0.10, 0.20, 0.50)  # ERASER's AOPC bins
DEFAULT_METHODS = ("lig",)
TOP_WORDS = 15  # words listed per label and slice
EXAMPLES = 3  # example rows per word
# A shortcut is decided by the scan's rule (explorer.data.words.word_ties: the word's rows carry the model's errors
# beyond what rows without it do); the explanation adds the attribution's evidence that the model relies on the
# word: its mean score over the label's rows is at least SHORTCUT_SCORE times the mean of every word there.
SHORTCUT_SCORE = 2.0
STEP_ROWS = 512  # erasure sequences per forward, at most
MARK = re.compile(r"\*([^*]+)\*")  # rationale as the text with marked words: *like this*


@dataclass(frozen=True)
class RowExplanation:
    """One row: its words and every method's score for each (toward the predicted label)."""
    row: int
    predicted: int
    given: int | None  # the checkpoint label the given label maps to (None: none does, or no label column)
    probability: float  # the predicted label's probability
    words: tuple[str, ...]  # readable words, specials left out
    scores: dict  # method -> (words,) scores toward the predicted label
    given_scores: tuple[float, ...] | None  # first method, toward the given label, where it differs
    comprehensiveness: dict  # method -> AOPC
    sufficiency: dict  # method -> AOPC
    random_comprehensiveness: float
    random_sufficiency: float
    rationale: tuple[bool, ...] | None = None  # per word: marked by the annotators


# ---- words of an attribution ----------------------------------------------------------------


def words_of(a: Attribution) -> tuple[tuple[str, ...], np.ndarray, list[int | None]]:
    """(words, (words,) summed scores, per-token word index) of one attribution, specials left out."""
    index = word_index(a.word_ids, a.special)
    n = 1 + max((i for i in index if i is not None), default=-1)
    words = [""] * n
    scores = np.zeros(n)
    pieces = a.pieces or a.tokens
    for tok, i, s in zip(pieces, index, a.scores):
        if i is not None:
            words[i] += tok
            scores[i] += float(s)
    return tuple(words), scores, index


# ---- faithfulness (pure: the model is a function of id sequences) ------------------------------------


# ---- rationales (pure) ------------------------------------------------------------------------


def rationale_scores(marked: Sequence[bool], scores) -> tuple[float, float, float]:
    """(token F1, IOU, AUPRC) of one row's word scores against its marked words (see the module docstring)."""
    from sklearn.metrics import average_precision_score

    gold = np.asarray(marked, bool)
    k = int(gold.sum())
    order = sorted(range(len(gold)), key=lambda w: -float(scores[w]))
    pred = np.zeros(len(gold), bool)
    pred[order[:k]] = True
    tp = int((pred & gold).sum())
    precision, recall = tp / max(int(pred.sum()), 1), tp / max(k, 1)
    f1 = 0.0 if tp == 0 else 2 * precision * recall / (precision + recall)
    iou = tp / max(int((pred | gold).sum()), 1)
    return f1, iou, float(average_precision_score(gold, np.asarray(scores, np.float64)))


def rationale_words(ck: Checkpoint, cell: str) -> tuple[str, ...]:
    """A rationale cell's words as the model's readable words: `*marked*` spans of the text, else a
    space-separated list. Each is split and cased as the tokenizer reads it, so it compares with row words."""
    cell = "" if cell is None or (isinstance(cell, float) and math.isnan(cell)) else str(cell)
    marked = MARK.findall(cell)
    return readable_words(ck, " ".join(marked) if marked else cell)


def readable_words(ck: Checkpoint, text: str) -> tuple[str, ...]:
    """`text`'s words as an attribution's words read (word pieces merged, no special tokens)."""
    if not text.strip():
        return ()
    enc = ck.tokenizer(text, add_special_tokens=False)
    tokens = ck.tokenizer.convert_ids_to_tokens(enc["input_ids"])
    special = [False] * len(tokens)
    word_ids = enc.word_ids() if hasattr(enc, "word_ids") else list(range(len(tokens)))
    pieces = word_pieces(ck.tokenizer, tokens, special, word_ids)
    words: dict[int, str] = {}
    for p, i in zip(pieces, word_index(word_ids, special)):
        words[i] = words.get(i, "") + p
    return tuple(words.values())


# ---- the whole run ----------------------------------------------------------------------------


def checked_methods(methods: Sequence[str]) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(ALIASES.get(m, m) for m in methods))
    for m in out:
        if m not in METHODS:
            raise DataError("explain_unknown_method", method=str(m)[:40], choices=", ".join(METHODS))
    if not out:
        raise DataError("explain_no_method", choices=", ".join(METHODS))
    return out


def explain_rows(ck: Checkpoint, head: Head, *, texts: Sequence[str], given: Sequence[int | None] | None = None,
                 methods: Sequence[str] = DEFAULT_METHODS, text_pairs: Sequence[str] | None = None,
                 rationales: Sequence[tuple[str, ...]] | None = None, seed: int = 0,
                 progress: Progress | None = None, lang: str = "en") -> tuple[list[RowExplanation], dict]:
    """Every row explained and measured (this process's share, gathered under a launcher), in row order;
    also {"processes", "seconds"}. `given`: per row the checkpoint label its given label maps to.
    `rationales`: per row the marked words (rationale_words), or ()."""
    from explorer.model.inference import rank, world_size

    methods = checked_methods(methods)
    n = len(texts)
    if n == 0:
        raise DataError("explain_no_rows")
    say = progress or (lambda f, m: None)
    start = time.perf_counter()
    size = world_size()
    mine = np.array_split(np.arange(n), size)[rank()] if size > 1 else np.arange(n)
    rows = [int(r) for r in mine]
    pairs = [text_pairs[r] for r in rows] if text_pairs is not None else None
    share = 0.8 / (len(methods) + 1)

    def part(k: int, what: str) -> Progress:
        def report(done: float, _msg: str) -> None:
            rate = done / 0.8 * len(rows) / max(time.perf_counter() - start, 1e-9)
            say(done, i18n.t("explain.progress", lang, step=what, rate=f"{rate:.1f}"))
        reporter = span(report, k * share, (k + 1) * share)
        reporter(0.0, "")  # the part is named as it starts (its first batch's report comes after the batch)
        return reporter

    first = batched.attribute_many(ck, head, texts=[texts[r] for r in rows], method=methods[0], target=None,
                                   text_pairs=pairs,
                                   progress=part(0, methods[0]))
    targets = [a.target for a in first]
    by_method = {methods[0]: first}
    for k, m in enumerate(methods[1:], 1):
        by_method[m] = batched.attribute_many(ck, head, texts=[texts[r] for r in rows], method=m, target=targets,
                                              text_pairs=pairs,
                                              progress=part(k, m))
    differ = [i for i, r in enumerate(rows) if given is not None and given[r] is not None and given[r] != targets[i]]
    given_attr = dict(zip(differ, batched.attribute_many(
        ck, head, texts=[texts[rows[i]] for i in differ], method=methods[0], target=[given[rows[i]] for i in differ],
        text_pairs=[pairs[i] for i in differ] if pairs is not None else None, progress=part(len(methods), i18n.t("explain.given_step", lang)))))
    faith = i18n.t("explain.progress_faithfulness", lang)
    out = _measure(ck, head, rows, by_method, given_attr, given, rationales, seed,
                   lambda frac: say(0.8 + 0.2 * frac, faith))
    if size > 1:
        out = _gather(out)
    return sorted(out, key=lambda r: r.row), {"processes": size, "seconds": time.perf_counter() - start}


def _measure(ck, head, rows, by_method, given_attr, given, rationales, seed, progress) -> list[RowExplanation]:
    """Words, faithfulness and rationales of each row; the probabilities of all rows' erasures in batches."""
    methods = list(by_method)
    first = by_method[methods[0]]
    typed = "token_type_ids" in ck.tokenizer.model_input_names and "token_type_ids" in forward_inputs(ck.model)
    jobs: list[tuple[int, list, bool]] = []  # (target, id sequence, typed)
    plan = []
    for i, a in enumerate(first):
        words, _, index = words_of(a)
        ty = typed and 1 in a.segments  # a pair keeps each remaining token's segment
        items = list(zip(a.token_ids, a.segments)) if ty else list(a.token_ids)
        rng = np.random.default_rng([seed, rows[i]])
        full_at = len(jobs)
        jobs.append((a.target, items, ty))
        spans = {}
        for m in [*methods, None]:  # None: the random ranking
            ws = rng.permutation(len(words)).astype(float) if m is None else words_of(by_method[m][i])[1]
            seqs = erasures(items, index, word_scores=ws)
            spans[m] = (len(jobs), len(jobs) + len(seqs))
            jobs.extend((a.target, seq, ty) for seq in seqs)
        plan.append((words, full_at, spans))
    probs = _probabilities(ck, head, jobs, progress)
    out = []
    for i, (words, full_at, spans) in enumerate(plan):
        a = first[i]
        full = float(probs[full_at])
        comp, suff = {}, {}
        for m in methods:
            lo, hi = spans[m]
            comp[m], suff[m] = aopc(full, probs[lo:hi])
        rc, rs = aopc(full, probs[spans[None][0]:spans[None][1]])
        r = rows[i]
        marks = None
        if rationales is not None and rationales[r]:
            want = {w.casefold() for w in rationales[r]}
            marks = tuple(w.casefold() in want for w in words)
        g = given_attr.get(i)
        out.append(RowExplanation(
            row=r, predicted=a.target, given=None if given is None else given[r], probability=full, words=words,
            scores={m: tuple(float(x) for x in words_of(by_method[m][i])[1]) for m in methods},
            given_scores=None if g is None else tuple(float(x) for x in words_of(g)[1]),
            comprehensiveness=comp, sufficiency=suff, random_comprehensiveness=rc, random_sufficiency=rs,
            rationale=marks))
    return out


def _probabilities(ck, head, jobs: list[tuple[int, list, bool]], progress) -> np.ndarray:
    """(jobs,) each sequence's target probability. A sequence asked for twice runs once (on a short text the
    1, 5, 10 and 20% bins all delete one word); the rest grouped by (target, typed), sorted by length so a
    batch pads little, in batches within the memory budget (model_prob). `progress(fraction)` after each
    batch (it may raise to stop)."""
    first: dict = {}
    same = [first.setdefault((t, ty, tuple(seq)), j) for j, (t, seq, ty) in enumerate(jobs)]
    unique = sorted(set(same))
    out = np.zeros(len(jobs))
    done = 0
    progress(0.0)
    groups = defaultdict(list)
    for j in unique:
        groups[(jobs[j][0], jobs[j][2])].append(j)
    for (target, typed), idx in groups.items():
        idx.sort(key=lambda j: -len(jobs[j][1]))
        prob = model_prob(ck, head, target=target, typed=typed)
        # At most STEP_ROWS a call, so progress (and a Stop) comes every few seconds however large the budget.
        rows = max(1, min(STEP_ROWS, budget.batch_rows(ck.model.config, max(1, len(jobs[idx[0]][1])))))
        for r in budget.chunks(len(idx), rows):
            part = idx[r.start:r.stop]
            out[part] = prob([jobs[j][1] for j in part])
            done += len(part)
            progress(done / len(unique))
    return out[same]


def _gather(rows: list[RowExplanation]) -> list[RowExplanation]:
    """Every process's rows, in every process, in rank order."""
    from explorer.model.inference import all_gathered

    return [r for part in all_gathered(rows) for r in part]


# ---- the result ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DatasetExplanation(JsonResult):
    labels: tuple[str, ...]  # the checkpoint's label names, id order
    methods: tuple[str, ...]
    rows: tuple[RowExplanation, ...]
    texts: tuple[str, ...]
    seconds: float
    processes: int = 1
    flagged: frozenset = field(default_factory=frozenset)  # rows an audit flagged
    given_names: tuple[str | None, ...] = ()  # per row the given label as the data names it
    text_pairs: tuple[str, ...] | None = None  # the second text of each row (sentence pairs)
    # data label -> the checkpoint's name for what it predicts on those rows, when the checkpoint's id2label reads
    # permuted against the data: given labels are then read through it, and `labels` are the data's names
    mapping: dict = field(default_factory=dict)
    checkpoint_labels: tuple[str, ...] = ()  # the checkpoint's own names, id order

    @property
    def rows_per_second(self) -> float:
        return len(self.rows) / max(self.seconds, 1e-9)

    # ---- words ----

    def top_words(self, rows: Sequence[RowExplanation], method: str | None = None, given: bool = False,
                  top: int | None = TOP_WORDS, first: frozenset | set = frozenset()) -> list[dict]:
        """Words over `rows` (most important first): total score, mean per occurrence, rows holding them and the
        example rows where they scored highest. `given`: the scores toward the given label. `first`: words ranked
        ahead of the rest (a label's tied words, `tied_words`), each group by its total, so a word every label
        shares does not win by its count."""
        method = method or self.methods[0]
        total, count, seen, best = defaultdict(float), defaultdict(int), defaultdict(set), defaultdict(list)
        for r in rows:
            scores = r.given_scores if given else r.scores[method]
            if scores is None:
                continue
            for w, s in zip(r.words, scores):
                total[w] += s
                count[w] += 1
                seen[w].add(r.row)
                best[w].append((-s, r.row))
        ranked = sorted(total, key=lambda w: (w not in first, -total[w], w))[:top]
        return [{"word": w, "score": round(total[w], 6), "mean": round(total[w] / count[w], 6), "rows": len(seen[w]),
                 "examples": [row for _, row in sorted(set(best[w]))[:EXAMPLES]]} for w in ranked]

    @property
    def has_given(self) -> bool:
        """Whether any row has a given label the checkpoint's labels can read (without, shortcuts are unknown)."""
        return any(r.given is not None for r in self.rows)

    @cached_property
    def _word_rows(self):
        """(rows x words presence matrix, words, (rows,) predicted ids, (rows,) given ids, -1 where a row has
        none, or None without given labels) over the explained rows' words."""
        x, words = word_matrix([r.words for r in self.rows])
        given = np.array([-1 if r.given is None else r.given for r in self.rows]) if self.has_given else None
        return x, words, np.array([r.predicted for r in self.rows]), given

    @cached_property
    def ties(self) -> dict[int, list[dict]]:
        """{label id: its word ties (explorer.data.words.word_ties: the scan's one rule, each with its kind,
        shortcut, meaning or unknown), each with `q`: the tie's p Benjamini-Hochberg-corrected over every
        label's ties, as the scan corrects them}."""
        from scipy.stats import false_discovery_control

        x, words, pred, given = self._word_rows
        out = {k: word_ties(x, words, pred, given, k) for k in np.unique(pred).tolist()}
        flat = [t for ts in out.values() for t in ts]
        if flat:
            for t, q in zip(flat, false_discovery_control([t["p"] for t in flat], method="bh")):
                t["q"] = round(float(q), 6)
        return out

    def tied_words(self, label: int) -> dict[str, dict]:
        """{word: its tie} for the words significantly tied to predicted `label` (q below TIE_ALPHA)."""
        return {t["word"]: t for t in self.ties.get(label, []) if t["q"] < TIE_ALPHA}

    def _relied(self, label: int, top: list[dict]) -> list[tuple[dict, dict, float]]:
        """(word item, its tie, typical) for `top`'s words that are tied to `label` and that the model relies on:
        mean score at least SHORTCUT_SCORE times the typical word's in the label's rows."""
        scores = [s for r in self.rows if r.predicted == label for s in r.scores[self.methods[0]]]
        typical = max(float(np.mean(scores)) if scores else 0.0, 0.0)
        tied = self.tied_words(label)
        return [(item, tied[item["word"]], typical) for item in top
                if item["word"] in tied and item["mean"] > SHORTCUT_SCORE * typical]

    def shortcuts(self, label: int, top: list[dict]) -> list[dict]:
        """`top`'s words (a label's words, top_words) that are shortcuts for predicted `label` by the scan's one
        rule (explorer.data.words.word_ties): tied to the label where the labels do not justify it, its rows
        carrying the model's errors (predicted `label` against their given label, at least MIN_ERRORS rows)
        beyond what rows without it do (Fisher, Benjamini-Hochberg). The attribution is the second condition,
        the explanation's counterpart of the scan's removal check: the model relies on the word (mean score at
        least SHORTCUT_SCORE times the typical word's). Without given labels a shortcut cannot be told from what
        the label means: none (see `shortcuts_need_labels`)."""
        return [_tie_fields(item, tie, typical) for item, tie, typical in self._relied(label, top)
                if tie["kind"] == SHORTCUT]

    def drivers(self, label: int, top: list[dict]) -> list[dict]:
        """`top`'s words tied to `label` that the model relies on and that are no shortcut: with given labels,
        what the label means in these data (kind "meaning"); without, "unknown"."""
        return [_tie_fields(item, tie, typical) for item, tie, typical in self._relied(label, top)
                if tie["kind"] != SHORTCUT]

    @property
    def shortcuts_need_labels(self) -> bool:
        """No word can be called a shortcut: without given labels a shortcut cannot be told from meaning."""
        return not self.has_given

    @cached_property
    def by_label(self) -> dict:
        out = {}
        for k, name in enumerate(self.labels):
            rows = [r for r in self.rows if r.predicted == k]
            missed = [r for r in self.rows if r.given == k and r.predicted != k]
            if not rows and not missed:
                continue
            ranked = self.top_words(rows, top=None, first=set(self.tied_words(k)))
            out[name] = {"rows": len(rows), "top_words": ranked[:TOP_WORDS], "shortcuts": self.shortcuts(k, ranked),
                         "drivers": self.drivers(k, ranked), "shortcuts_need_labels": self.shortcuts_need_labels,
                         "given_rows": len(missed), "given_words": self.top_words(missed, given=True)}
        return out

    def slice_rows(self, name: str) -> list[RowExplanation]:
        """Rows of a slice: "given=<label>", "predicted=<label>", "correct", "wrong", "flagged"."""
        kind, _, label = name.partition("=")
        k = self.labels.index(label) if label in self.labels else None
        test = {"given": lambda r: r.given == k, "predicted": lambda r: r.predicted == k,
                "correct": lambda r: r.given is not None and r.given == r.predicted,
                "wrong": lambda r: r.given is not None and r.given != r.predicted,
                "flagged": lambda r: r.row in self.flagged}[kind]
        return [r for r in self.rows if test(r)]

    @cached_property
    def slices(self) -> dict:
        names = [f"given={n}" for n in self.labels] + [f"predicted={n}" for n in self.labels] + \
            ["correct", "wrong"] + (["flagged"] if self.flagged else [])
        out = {}
        for name in names:
            rows = self.slice_rows(name)
            if rows:
                out[name] = {"rows": len(rows), "top_words": self.top_words(rows, top=10)}
        return out

    # ---- methods ----

    @cached_property
    def faithfulness(self) -> dict:
        return {m: {"comprehensiveness": _mean(r.comprehensiveness[m] for r in self.rows),
                    "sufficiency": _mean(r.sufficiency[m] for r in self.rows),
                    "random_comprehensiveness": _mean(r.random_comprehensiveness for r in self.rows),
                    "random_sufficiency": _mean(r.random_sufficiency for r in self.rows)} for m in self.methods}

    @cached_property
    def agreement(self) -> dict:
        from scipy.stats import kendalltau

        out: dict = {a: {} for a in self.methods}
        for a in self.methods:
            for b in self.methods:
                taus = [kendalltau(r.scores[a], r.scores[b]).statistic for r in self.rows if len(r.words) > 1]
                out[a][b] = _mean(t for t in taus if not np.isnan(t))
        return out

    def rationale_rows(self, label: int | None = None) -> list[RowExplanation]:
        return [r for r in self.rows if r.rationale is not None and any(r.rationale)
                and (label is None or r.predicted == label)]

    def rationale_agreement(self, label: int | None = None) -> dict:
        rows = self.rationale_rows(label)
        out = {}
        for m in self.methods:
            per = [rationale_scores(r.rationale, r.scores[m]) for r in rows]
            out[m] = {"token_f1": _mean(p[0] for p in per), "iou_f1": _mean(float(p[1] >= 0.5) for p in per),
                      "auprc": _mean(p[2] for p in per), "rows": len(per)}
        return out

    @property
    def has_rationales(self) -> bool:
        return any(r.rationale is not None for r in self.rows)

    def table(self, top: int = 3) -> list[dict]:
        """One row per text: prediction, given label, correct, flagged, the first method's top words."""
        out = []
        for r in self.rows:
            order = np.argsort(-np.asarray(r.scores[self.methods[0]]), kind="stable")[:top]
            out.append({"row": r.row, "text": self.texts[r.row], "predicted": self.labels[r.predicted],
                        "probability": round(r.probability, 6),
                        "given": self.given_names[r.row] if self.given_names else None,
                        "correct": None if r.given is None else r.given == r.predicted,
                        "flagged": r.row in self.flagged, "top_words": [r.words[i] for i in order]})
        return out

    def to_dict(self) -> dict:
        d = {"labels": self.by_label, "shortcuts_need_labels": self.shortcuts_need_labels, "mapping": self.mapping, "slices": self.slices, "faithfulness": _rounded(self.faithfulness),
             "agreement": _rounded(self.agreement), "rows": len(self.rows), "seconds": round(self.seconds, 3),
             "rows_per_second": round(self.rows_per_second, 3), "processes": self.processes,
             "methods": list(self.methods), "table": self.table()}
        if self.has_rationales:
            d["rationales"] = {**_rounded(self.rationale_agreement()), "by_label": {
                name: _rounded(self.rationale_agreement(k)) for k, name in enumerate(self.labels)
                if self.rationale_rows(k)}}
        return d

    def _repr_html_(self) -> str:
        from explorer.results import html_table

        rows = [{"label": name, "rows": v["rows"], "top words": ", ".join(w["word"] for w in v["top_words"][:8]),
                 "shortcuts": ", ".join(s["word"] for s in v["shortcuts"])} for name, v in self.by_label.items()]
        return html_table(rows, f"{len(self.rows)} rows, {', '.join(self.methods)}, {self.rows_per_second:.1f} rows/s")


def _tie_fields(item: dict, tie: dict, typical: float) -> dict:
    """One word of a label, as shortcuts and drivers list it: its attribution and its tie (word_ties)."""
    return {"word": item["word"], "rows": tie["rows"], "mean": item["mean"], "typical": round(typical, 6),
            "predicted_share": tie["predicted_share"], "given_share": tie["given_share"], "errors": tie["errors"],
            "errors_q": tie["errors_p"], "association": tie["association"], "q": tie["q"], "kind": tie["kind"]}


def _mean(values) -> float | None:
    v = [float(x) for x in values]
    return float(np.mean(v)) if v else None


def _rounded(d):
    if isinstance(d, dict):
        return {k: _rounded(v) for k, v in d.items()}
    return round(d, 6) if isinstance(d, float) else d


def explain(ck: Checkpoint, head: Head, *, texts: Sequence[str], given_names: Sequence[str | None] | None = None,
            methods: Sequence[str] = DEFAULT_METHODS, text_pairs: Sequence[str] | None = None,
            rationale_cells: Sequence[str] | None = None, flagged: Sequence[int] = (), data_type: str = ProblemType.SINGLE,
            seed: int = 0, progress: Progress | None = None, lang: str = "en") -> DatasetExplanation:
    """The whole run on texts (and their given labels as the data names them): checks, then explain_rows."""
    from explorer.model.checkpoints import is_token_classifier
    from explorer.data.mapping import checkpoint_target

    if is_token_classifier(ck):
        raise DataError("explain_token_classifier", name=ck.name)
    methods = checked_methods(methods)
    if not texts:
        raise DataError("explain_no_rows")
    given, mapping = None, {}
    if given_names is not None:
        mapping = _permutation(ck, texts, given_names, text_pairs) if data_type == ProblemType.SINGLE else {}
        given = [None if g is None else _label_id(ck, checkpoint_target(g, data_type, ck, permuted=mapping).label)
                 for g in given_names]
    rationales = None
    if rationale_cells is not None:  # checked before the costly part
        rationales = [rationale_words(ck, c) for c in rationale_cells]
        check_rationales(ck, texts, text_pairs=text_pairs, rationales=rationales)
    rows, info = explain_rows(ck, head, texts=texts, given=given, methods=methods, text_pairs=text_pairs,
                              rationales=rationales, seed=seed, progress=progress, lang=lang)
    back = {b: a for a, b in mapping.items()}  # checkpoint name -> the data's name for it
    return DatasetExplanation(labels=tuple(back.get(n, n) for n in ck.labels), methods=methods, rows=tuple(rows),
                              texts=tuple(texts), mapping=mapping, checkpoint_labels=tuple(ck.labels),
                              seconds=info["seconds"], processes=info["processes"],
                              flagged=frozenset(int(f) for f in flagged),
                              given_names=tuple(given_names) if given_names is not None else (),
                              text_pairs=tuple(text_pairs) if text_pairs is not None else None)


def _permutation(ck: Checkpoint, texts: Sequence[str], given_names: Sequence[str | None],
                 text_pairs: Sequence[str] | None) -> dict[str, str]:
    """The permuted mapping the data show (explorer.data.mapping, the Data page's and the scan's check), from one
    plain forward over the labelled rows; {} when the names agree. Read before anything is named, so no word or
    shortcut is ever reported against a rotated name."""
    from explorer.data.mapping import agreement_mapping, permuted_mapping
    from explorer.data.names import name_matches
    from explorer.model.inference import predict_ids

    rows = [i for i, g in enumerate(given_names) if g is not None]
    if len(rows) < 2:
        return {}
    labels = [str(given_names[i]).strip() for i in rows]
    pred = predict_ids(ck, [texts[i] for i in rows], text_pairs=[text_pairs[i] for i in rows] if text_pairs else None)
    check = agreement_mapping(labels, pred, ck.labels, name_matches(sorted(set(labels)), ck.labels))
    return permuted_mapping(check, ck)


def _label_id(ck: Checkpoint, label: str | None) -> int | None:
    return None if label is None else list(ck.labels).index(label)


def check_rationales(ck: Checkpoint, texts: Sequence[str], *, text_pairs: Sequence[str] | None,
                     rationales: Sequence[tuple[str, ...]]) -> None:
    """Refuse rationale words that are not words of their row's text: counted, with examples."""
    missing = []
    for r, want in enumerate(rationales):
        if not want:
            continue
        have = {w.casefold() for w in readable_words(ck, texts[r] + (" " + text_pairs[r] if text_pairs else ""))}
        missing += [(r, w) for w in want if w.casefold() not in have]
    if missing:
        examples = "; ".join(f"row {row}: {w!r}" for row, w in missing[:3])
        raise DataError("explain_rationale_missing", n=len(missing), rows=len({row for row, _ in missing}),
                        examples=examples)


def explain_table(ck: Checkpoint, head: Head, *, table, text_column: str | None = None, label_column: str | None = None,
                  text_pair_column: str | None = None, rationale_column: str | None = None,
                  methods: Sequence[str] = DEFAULT_METHODS, flagged: Sequence[int] = (), seed: int = 0,
                  progress: Progress | None = None, lang: str = "en", max_rows: int | None = None) -> DatasetExplanation:
    """`explain` on a read CSV (explorer.data.dataset.Table): its columns as the Data page reads them; its
    first `max_rows` rows (None: all)."""
    import dataclasses

    from explorer.data.dataset import prepare

    if max_rows is not None:
        table = dataclasses.replace(table, frame=table.frame.head(max_rows))
    methods = checked_methods(methods)  # before any costly work
    if table.frame.empty:
        raise DataError("explain_no_rows")
    if rationale_column and rationale_column not in table.frame.columns:
        raise DataError("explain_rationale_column", column=rationale_column[:60],
                        columns=", ".join(map(str, table.frame.columns))[:200])
    data = prepare(table, text_column, label_column, text_pair_column=text_pair_column)
    if data.problem_type == ProblemType.REGRESSION:
        given = None
    elif data.problem_type == ProblemType.MULTI:
        given = ["|".join(n for n, v in zip(data.label_names, y) if v > 0.5) for y in data.y]
    else:
        given = [data.label_names[int(y)] for y in data.y]
    cells = list(table.frame[rationale_column]) if rationale_column else None
    return explain(ck, head, texts=data.texts, given_names=given, methods=methods, text_pairs=data.text_pairs,
                   rationale_cells=cells, flagged=flagged, data_type=data.problem_type, seed=seed,
                   progress=progress, lang=lang)
