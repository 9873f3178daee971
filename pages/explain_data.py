"""Dataset explanations: which words drive each label over the Data page's CSV, possible shortcuts, and how far
each attribution method can be trusted on this model; run as a queued job with progress and Stop."""
from explorer import ui
from explorer.explain.dataset import explain_table
from explorer.ui.views import explain_data as explain_view

src, sel = ui.open_data_page("explain_data", "explain")
methods, max_rows, rationale = explain_view.draw_options(src)
ck, head, lang = ui.checkpoint(sel.name, sel.seed), ui.head(sel.name, sel.head_name, sel.seed), ui.lang()
run = ui.run_on_data("explain", src, src.key(src.text_pair_column, rationale, tuple(methods), max_rows, *sel.key(
    "name", "head_name", "seed")), lambda table, progress: explain_table(
        ck, head, table=table, text_column=src.text_column, label_column=src.label_column,
        text_pair_column=src.text_pair_column, rationale_column=rationale or None, methods=methods, seed=sel.seed,
        progress=progress, lang=lang, max_rows=max_rows),
    expected_s=max_rows / 5 * len(methods),  # about 5 rows/s a method, until one has run
    draw_what_comes=explain_view.draw_explanations_preview, disabled=not methods)
explain_view.draw_explanation(explain_view.with_audit_flags(run, ui.last_run("audit", src)))
