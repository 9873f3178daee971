"""Dataset explanations: which words drive each label over the Data page's CSV, possible shortcuts, and how far
each attribution method can be trusted on this model; run as a queued job with progress and Stop."""
import dataclasses
import hashlib

import streamlit as st

from explorer import plots, ui
from explorer.data.dataset import read_csv
from explorer.explain.dataset import explain_table
from explorer.explain.attribution import METHODS
from explorer.text.errors import ExplorerError
from explorer.ui import t
from explorer.ui.views import explain_data as explain_view

ss = st.session_state
st.title(t("explain_data.title"))
st.caption(t("explain.intro"))
if ui.show_other_prompt():
    st.stop()
src = ui.data_source()  # set by the Data page (its current version); the demo tweets until then
sel = ui.selection()
st.caption(t("explain.data", name=ui.plain(src.title()), checkpoint=ui.plain(sel.name)))
c1, c2, c3 = st.columns(3)
methods = c1.multiselect(t("explain.methods"), METHODS, **ui.sticky("explain_methods", ["lig"]))
max_rows = int(c2.number_input(t("explain.max_rows"), 10, 1000, help=t("explain.max_rows_help"),
                               **ui.sticky("explain_max_rows", 100)))
if ss.get("explain_rationale") not in ("", *src.columns):  # a column of a CSV since replaced on the Data page
    ss["explain_rationale"] = ""
rationale = c3.selectbox(t("explain.rationale"), ["", *src.columns], help=t("explain.rationale_help"),
                         format_func=lambda c: c or t("explain.no_rationale"), **ui.sticky("explain_rationale", ""))
digest = hashlib.sha1(src.bytes).hexdigest()
key = (digest, src.text_column, src.label_column, src.text_pair_column, rationale, tuple(methods), max_rows,
       sel.name, sel.head_name, sel.seed)

if getattr(ss.get("explain_result"), "key", None) != key:
    pressed = st.button(t("explain.run"), key="explain_run", type="primary", disabled=not methods)
    ck, head, lang = ui.checkpoint(sel.name, sel.seed), ui.head(sel.name, sel.head_name, sel.seed), ui.lang()

    def work(progress):  # in a job slot (explorer/runtime/jobs.py): a class's runs wait in line
        return explain_table(ck, head, table=read_csv(src.bytes), text_column=src.text_column,
                             label_column=src.label_column, text_pair_column=src.text_pair_column,
                             rationale_column=rationale or None, methods=methods, seed=sel.seed, progress=progress,
                             lang=lang, max_rows=max_rows)

    try:
        done = ui.run("explain", key, work, heavy=True, start=pressed, running=t("explain.starting"), stop=t("explain.stop"),
                      expected_s=max_rows / 5 * len(methods))  # about 5 rows/s a method, until one has run
    except ExplorerError as err:
        ui.show_error(err)
        st.stop()
    if done is None:
        ui.draw_example(plots.examples.explain_example(t), "explain_example")  # what the run will draw
        st.stop()
    ss["explain_result"] = ui.ExplainRun(key, done)
found = ss["explain_result"].found
audit = ss.get("audit_result")  # the Label audit's flagged rows, when it ran on this same data
flagged = frozenset(int(r) for r in audit.found.flagged) if audit is not None and audit.key[0] == digest else frozenset()
if found.flagged != flagged:
    found = dataclasses.replace(found, flagged=flagged)
    ss["explain_result"] = ui.ExplainRun(key, found)
explain_view.draw_summary(found)
explain_view.draw_labels(found)
explain_view.draw_slices(found)
explain_view.draw_methods(found)
explain_view.draw_rows(found)
