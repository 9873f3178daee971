"""The tag report: token data's tags alone (the scheme from the tag names, sequences no scheme allows, by
seqeval's own scheme rules) and against a token classifier (tags one side lacks, placeholder names, and a
permuted mapping found with mapping.agreement_mapping on the word-level confusion of the data's tags against
the checkpoint's predictions): the sentence labels' report (explorer.data.labels), per word.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from explorer.data.mapping import PERMUTED_GAIN, Issue, agreement_mapping, check_kind, checkpoint_issues
from explorer.data.names import name_matches
from explorer.data.subwords import alignment, word_logits
from explorer.data.tags import TagData
from explorer.model.checkpoints import TOKEN_CLASSIFICATION
from explorer.results import JsonResult
from explorer.text.errors import Message

_PREFIXED = re.compile(r"^([BIES])-(.+)$")


def scheme(tag_names) -> str:
    """"BIOES" when an E- or S- tag appears, "IOB2" (BIO) with B-/I- tags, "IO" with I- only, "none" when
    any tag but O has no prefix."""
    prefixes = set()
    for t in tag_names:
        if t == "O":
            continue
        m = _PREFIXED.match(t)
        if not m:
            return "none"
        prefixes.add(m.group(1))
    if prefixes & {"E", "S"}:
        return "BIOES"
    if "B" in prefixes:
        return "IOB2"
    return "IO" if prefixes else "none"


def invalid_sequences(tags, kind: str) -> tuple[int, tuple[dict, ...]]:
    """(count, up to 10 examples {sentence, word, tag, previous}) of tags that neither start nor continue a
    chunk under `kind` (IOB2: I-X after O or after B-Y; BIOES also E-X). seqeval's own scheme classes
    (IOB2, IOBES) decide; its metrics would silently fix such a tag in default mode or drop it in strict."""
    from seqeval.scheme import IOB2, IOBES, Prefix

    rule = {"IOB2": IOB2, "BIOES": IOBES}.get(kind)
    if rule is None:
        return 0, ()
    n, examples = 0, []
    for s, row in enumerate(tags):
        prev = rule("O")
        for w, t in enumerate(row):
            tok = rule(t)
            if tok.prefix in (Prefix.I, Prefix.E) and not tok.is_start(prev) and not tok.is_inside(prev):
                n += 1
                if len(examples) < 10:
                    examples.append({"sentence": s + 1, "word": w + 1, "tag": t, "previous": prev.token})
            prev = tok
    return n, tuple(examples)


@dataclass(frozen=True, eq=False)
class TagReport(JsonResult):
    sentences: int
    words: int
    layout: str
    tokens_column: str | None
    tags_column: str | None
    tags: tuple[tuple[str, int], ...]  # (name, words tagged), most frequent first
    scheme: str
    invalid: int  # tags no scheme rule allows
    invalid_examples: tuple[dict, ...]
    issues: tuple[Issue, ...]
    notes: tuple[Message, ...]
    suggested_mapping: dict[str, str] = field(default_factory=dict)  # data tag -> checkpoint tag
    accuracy_before: float | None = None  # word-level agreement, identity mapping
    accuracy_after: float | None = None  # under the best one-to-one mapping
    confusion: np.ndarray | None = None  # (data tags, checkpoint tags) word counts
    confusion_rows: tuple[str, ...] = ()
    confusion_cols: tuple[str, ...] = ()
    agreement: str = "accuracy"  # what accuracy_before/after measure (as LabelReport's): word accuracy

    @property
    def kinds(self) -> set[str]:
        return {i.kind for i in self.issues}

    def to_dict(self) -> dict:
        return {
            "task": TOKEN_CLASSIFICATION, "sentences": self.sentences, "words": self.words, "layout": self.layout,
            "tokens_column": self.tokens_column, "tags_column": self.tags_column,
            "tags": [{"name": n, "count": c} for n, c in self.tags], "scheme": self.scheme,
            "invalid": self.invalid, "invalid_examples": list(self.invalid_examples),
            "issues": [{"kind": i.kind, "message": i.message, **({"detail": i.detail} if i.detail else {})}
                       for i in self.issues],
            "notes": list(self.notes), "suggested_mapping": self.suggested_mapping,
            "accuracy_before": self.accuracy_before, "accuracy_after": self.accuracy_after,
            "confusion": None if self.confusion is None else {
                "rows": list(self.confusion_rows), "cols": list(self.confusion_cols),
                "counts": self.confusion.astype(int).tolist()},
        }


def tag_report(data: TagData, ck=None, max_predict: int = 2000, max_length: int = 128) -> TagReport:
    """Everything worth knowing about token data's tags, alone and (with a token-classifier `ck`) against
    the checkpoint's predictions on up to `max_predict` sentences. Raises DataError for a sentence
    classifier."""
    counts: dict[str, int] = {}
    for row in data.tags:
        for t in row:
            counts[t] = counts.get(t, 0) + 1
    kind = scheme(data.tag_names)
    n_bad, examples = invalid_sequences(data.tags, kind)
    issues, notes = [], list(data.notes)
    if n_bad:
        e = examples[0]
        issues.append(Issue("invalid_tags", Message("issue_tags_invalid", n=n_bad, scheme=kind, tag=e["tag"],
                                                    previous=e["previous"], sentence=e["sentence"], word=e["word"]),
                            {"examples": list(examples)}))
    report: dict = {}
    if ck is None:
        notes.append(Message("note_tags_first_subword"))
    else:
        check_kind(ck, True)
        notes.append(alignment(ck.tokenizer, data, max_length).note())
        issues += checkpoint_issues(ck)
        generic = any(i.kind == "generic_label_names" for i in issues)
        ck_labels = ck.labels
        renames = {} if generic else name_matches(data.tag_names, ck_labels)
        extra = sorted(set(data.tag_names) - set(ck_labels) - set(renames))
        unused = sorted(set(ck_labels) - set(data.tag_names) - set(renames.values()))
        # Only tags the checkpoint lacks are an issue: valid BIO data need not use every tag it knows.
        if not generic and extra:
            issues.append(Issue("unseen_tags", Message("issue_unseen_tags", file_only=", ".join(extra), name=ck.name,
                                                       checkpoint_only=", ".join(unused) or "—"),
                                {"csv_only": extra, "checkpoint_only": unused}))
        elif not generic and unused:
            notes.append(Message("note_tags_unused", name=ck.name, tags=", ".join(unused)))
        if not ck.new_weights and len(data.tag_names) >= 2:
            take = list(range(min(max_predict, len(data.words))))
            logits = word_logits(ck.model, ck.tokenizer, [list(data.words[i]) for i in take], max_length)
            truth = [t for i, rows in zip(take, logits) for t in data.tags[i][:len(rows)]]
            pred = np.concatenate([r.argmax(-1) for r in logits]) if logits else np.zeros(0, np.int64)
            check = agreement_mapping(truth, pred, ck_labels, renames)
            moved = {a: b for a, b in check["best"].items() if check["identity"].get(a) != b}
            report.update(accuracy_before=check["before"], accuracy_after=check["after"],
                          confusion=check["confusion"], confusion_rows=check["rows"], confusion_cols=check["cols"])
            if moved and check["after"] >= check["before"] + PERMUTED_GAIN:
                issues.append(Issue("permuted_mapping",
                                    Message("issue_permuted", n=len(moved), name=ck.name,
                                            before=f"{check['before']:.0%}", after=f"{check['after']:.0%}"),
                                    {"moved": moved}))
                report["suggested_mapping"] = check["best"]
    return TagReport(sentences=len(data.words), words=data.n_words, layout=data.layout,
                     tokens_column=data.tokens_column, tags_column=data.tags_column,
                     tags=tuple(sorted(counts.items(), key=lambda kv: -kv[1])), scheme=kind, invalid=n_bad,
                     invalid_examples=examples, issues=tuple(issues), notes=tuple(notes), **report)
