"""The Dataset explanations page (pages/explain_data.py), its sections: per-label words and shortcuts,
slices, each method's faithfulness, agreement and rationale scores, and the rows (a click puts one into the
sidebar)."""
from __future__ import annotations

import dataclasses
import functools

import streamlit as st

from explorer.explain.dataset import DatasetExplanation
from explorer.ui.render import draw_example, draw_table, plain
from explorer.ui.datapage import keep_found, open_row, picked_row
from explorer.ui.session import DataRun, DataSource, sticky, t

ss = st.session_state


def draw_options(src: DataSource) -> tuple[list[str], int, str]:
    """The run's options: the attribution methods, how many rows, and the data's rationale column ("" for none)."""
    from explorer.explain.attribution import METHODS

    c1, c2, c3 = st.columns(3)
    methods = c1.multiselect(t("explain.methods"), METHODS, **sticky("explain_methods", ["lig"]))
    max_rows = int(c2.number_input(t("explain.max_rows"), 10, 1000, help=t("explain.max_rows_help"),
                                   **sticky("explain_max_rows", 100)))
    if ss.get("explain_rationale") not in ("", *src.columns):  # a column of a CSV since replaced on the Data page
        ss["explain_rationale"] = ""
    rationale = c3.selectbox(t("explain.rationale"), ["", *src.columns], help=t("explain.rationale_help"),
                             format_func=lambda c: c or t("explain.no_rationale"), **sticky("explain_rationale", ""))
    return methods, max_rows, rationale


def draw_explanations_preview() -> None:
    """Before the first run: an example of the chart it draws."""
    from explorer.plots.examples import explain_example

    draw_example(explain_example(t), "explain_example")


def with_audit_flags(run: DataRun, audit: DataRun | None) -> DatasetExplanation:
    """The explanation with the Label audit's flagged rows marked (`audit`: its last run on this same data, or
    None), kept so: the next run reads the same result."""
    flagged = frozenset(int(r) for r in audit.found.flagged) if audit is not None else frozenset()
    found = run.found
    if found.flagged != flagged:
        found = dataclasses.replace(found, flagged=flagged)
        keep_found("explain", found)
    return found


def draw_explanation(found: DatasetExplanation) -> None:
    """The whole explanation: summary, per-label words, slices, the methods' scores and the rows."""
    draw_summary(found)
    draw_labels(found)
    draw_slices(found)
    draw_methods(found)
    draw_rows(found)


def _words(items: list[dict]) -> list[dict]:
    return [{t("explain.col_word"): w["word"], t("explain.col_total"): round(w["score"], 3),
             t("explain.col_mean"): round(w["mean"], 3), t("explain.col_rows"): w["rows"],
             t("explain.col_examples"): ", ".join(map(str, w["examples"]))} for w in items]


def draw_summary(found: DatasetExplanation) -> None:
    m = st.columns(4)
    m[0].metric(t("explain.rows"), len(found.rows))
    m[1].metric(t("explain.rate"), f"{found.rows_per_second:.1f}")
    wrong = found.slices.get("wrong", {}).get("rows", 0)
    judged = sum(r.given is not None for r in found.rows)
    m[2].metric(t("explain.accuracy"), f"{1 - wrong / judged:.1%}" if judged else "—")
    m[3].metric(t("explain.shortcuts"), "—" if found.shortcuts_need_labels else
                sum(len(v["shortcuts"]) for v in found.by_label.values()))


def draw_labels(found: DatasetExplanation) -> None:
    """Per predicted label: its words, its shortcuts by the scan's rule (or why none can be named: no given
    labels), the words that drive it, and the words toward it on rows given it but predicted otherwise."""
    st.subheader(t("explain.labels_title"))
    if found.mapping:
        pairs = ", ".join(f"{plain(a)} → {plain(b)}" for a, b in found.mapping.items())
        st.info(t("explain.mapping", pairs=pairs), icon=":material/swap_horiz:")
    if found.shortcuts_need_labels:
        st.info(t("explain.shortcuts_need_labels"), icon=":material/info:")
    for name, v in found.by_label.items():
        words = ", ".join(plain(w["word"]) for w in v["top_words"][:5])
        st.markdown(f"**{plain(name)}** · {t('explain.label_rows', n=v['rows'])} · {words}")
        for s in v["shortcuts"]:
            st.warning(t("explain.shortcut", word=plain(s["word"]), rows=s["rows"], label=plain(name),
                         errors=s["errors"]), icon=":material/warning:")
        if v["drivers"]:
            key = "explain.relied" if v["shortcuts_need_labels"] else "explain.drivers"
            st.caption(t(key, label=plain(name), words=", ".join(f"'{plain(d['word'])}'" for d in v["drivers"])))
        if v["top_words"]:
            draw_table(_words(v["top_words"]), key=f"explain_words_{name}")
        if v["given_rows"]:
            st.caption(t("explain.given_words", n=v["given_rows"], label=plain(name)))
            draw_table(_words(v["given_words"]), key=f"explain_given_{name}")


def _slice_name(name: str) -> str:
    kind, _, label = name.partition("=")
    return t(f"explain.slice_{kind}", label=label) if label else t(f"explain.slice_{kind}")


def draw_slices(found: DatasetExplanation) -> None:
    st.subheader(t("explain.slices_title"))
    names = list(found.slices)
    pick = st.selectbox(t("explain.slice"), names, format_func=_slice_name, key="explain_slice")
    if pick:
        st.caption(t("explain.label_rows", n=found.slices[pick]["rows"]))
        draw_table(_words(found.slices[pick]["top_words"]), key="explain_slice_words")


def draw_methods(found: DatasetExplanation) -> None:
    st.subheader(t("explain.methods_title"))
    st.caption(t("explain.faithfulness_help"))
    draw_table([{t("explain.col_method"): m, **{t(f"explain.col_{k}"): None if v is None else round(v, 3)
                                            for k, v in f.items()}} for m, f in found.faithfulness.items()],
          key="explain_faithfulness")
    if len(found.methods) > 1:
        st.caption(t("explain.agreement_help"))
        draw_table([{t("explain.col_method"): a, **{b: None if v is None else round(v, 3) for b, v in row.items()}}
               for a, row in found.agreement.items()], key="explain_agreement")
    if found.has_rationales:
        st.caption(t("explain.rationales_help"))
        draw_table([{t("explain.col_method"): m, **{t(f"explain.col_{k}"): round(v, 3) if isinstance(v, float) else v
                                                for k, v in r.items()}}
               for m, r in found.rationale_agreement().items()], key="explain_rationales")


FILTERS = ("all", "wrong", "correct", "flagged")


def draw_rows(found: DatasetExplanation) -> None:
    """The rows, filterable by slice and by a word; a click on one puts its text into the sidebar."""
    st.subheader(t("explain.rows_title"))
    c1, c2 = st.columns(2)
    kinds = [f for f in FILTERS if f != "flagged" or found.flagged] + [f"predicted={n}" for n in found.by_label]
    pick = c1.selectbox(t("explain.filter"), kinds, key="explain_filter",
                        format_func=lambda k: t("explain.filter_all") if k == "all" else _slice_name(k))
    word = c2.text_input(t("explain.filter_word"), key="explain_filter_word").strip().casefold()
    chosen = found.rows if pick == "all" else found.slice_rows(pick)
    keep = {r.row for r in chosen if not word or word in (w.casefold() for w in r.words)}
    shown = [row for row in found.table() if row["row"] in keep]
    st.caption(t("explain.click_row"))
    st.dataframe([{t("explain.col_row"): row["row"], t("explain.col_predicted"): row["predicted"],
                   t("explain.col_given"): row["given"] or "",
                   t("explain.col_flag"): "⚑" if row["flagged"] else "",
                   t("explain.col_top"): " · ".join(row["top_words"]), t("explain.col_text"): row["text"]}
                  for row in shown], key="explain_rows", selection_mode="single-row", hide_index=True,
                 on_select=functools.partial(_to_sidebar, found, [row["row"] for row in shown]))


def _to_sidebar(found: DatasetExplanation, shown: list[int]) -> None:
    row = picked_row("explain_rows", shown)
    if row is not None:
        open_row({"text": found.texts[row], "text_pair": found.text_pairs[row] if found.text_pairs else ""})
