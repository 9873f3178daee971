"""Sections of the longer pages, drawn from a core result: a page stays a list of widgets and calls."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import streamlit as st

from explorer import plots
from explorer.explain import whatif
from explorer.explain.sampled import AGREEMENT_WARN
from explorer.model.problem import PIPELINE_FUNCTIONS, ProblemType
from explorer.text.errors import ExplorerError
from explorer.ui import render
from explorer.ui.cache import checkpoint, current_head, memo, timed
from explorer.ui.render import error, guarded, plain
from explorer.ui.session import (DataSource, drop_data_versions, lang, progress_to, register_session_checkpoint,
                                 selection, session_checkpoint_names, session_zip, session_zip_ready,
                                 set_data_source, sticky, t)


def pipeline_readings(a) -> None:
    """What transformers' pipeline() returns beside the model's own reading of the same logits: two
    metrics for the top label when the two functions differ (a one-output head: MSE on the raw value,
    a sigmoid in pipeline()), and one sentence saying which tool returns which."""
    own = ProblemType(a.problem_type)
    fn = {f: t(f"pipeline.fn_{f}") for f in PIPELINE_FUNCTIONS}
    if not a.pipeline_differs:
        st.caption(t("pipeline.same", function=fn[a.pipeline_function], loss=own.loss_name))
        return
    k = int(np.argmax(a.pipeline_scores))
    c1, c2 = st.columns(2)
    c1.metric(t("pipeline.own_metric", label=plain(a.labels[k]), function=fn[own.output], loss=own.loss_name),
              f"{a.scores[k]:.4f}")
    c2.metric(t("pipeline.pipe_metric", label=plain(a.labels[k]), function=fn[a.pipeline_function]),
              f"{a.pipeline_scores[k]:.4f}")
    st.caption(t("pipeline.differs", loss=own.loss_name, own=fn[own.output], ptype=a.problem_type,
                 pipe=fn[a.pipeline_function]))


def completeness(r) -> None:
    """An attribution's completeness check (integrated methods: the scores' sum against f(x) - f(baseline),
    and whether the steps converged), or the note that saliency is unsigned; and its sampling."""
    _check_numbers(r)
    verdict(r)
    if r.sampling is not None:
        sampling(r)


def _check_numbers(r) -> None:
    if r.delta is not None:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric(t("attributions.sum"), f"{r.scores.sum():+.4f}")
        m2.metric(t("attributions.diff"), f"{r.f_x - r.f_baseline:+.4f}",
                  help=t("attributions.diff_help", fx=r.f_x, fb=r.f_baseline))
        m3.metric(t("attributions.delta"), f"{r.delta:+.2e}", help=t("attributions.delta_help"))
        m4.metric(t("attributions.n_steps"), str(r.n_steps))


def verdict(r) -> None:
    """An attribution's verdict in one line: complete or not (integrated methods), or that saliency is
    unsigned; and a warning when two sampling seeds disagree."""
    if r.delta is not None:
        if r.converged is None:  # a sampled method (gradient_shap): no completeness promised, the gap is information
            st.info(t("sampled.completeness_gap", error=f"{r.error:.2%}", samples=r.sampling.n_samples))
        elif not r.converged:
            st.warning(t("arch.not_converged", error=f"{r.error:.2%}", steps=r.n_steps))
        else:
            st.success(t("attributions.complete", error=100 * r.error))
    elif r.method == "saliency":
        st.info(t("attributions.unsigned"))
    if r.sampling is not None and r.sampling.agreement is not None and r.sampling.agreement < AGREEMENT_WARN:
        st.warning(t("sampled.disagree", rho=r.sampling.agreement))


def method_notes(r) -> None:
    """How an attribution was computed, in an expander after its chart: what it explains, the baseline,
    the completeness check's numbers and the sampling (the page shows the verdict under the chart)."""
    with st.expander(t("attributions.notes")):
        st.caption(t("attributions.explains", label=plain(r.target_label), quantity=t(f"attributions.q_{r.quantity}"),
                     seconds=r.seconds))
        st.caption(t("arch.baseline"))
        _check_numbers(r)
        if r.sampling is not None:
            sampling(r)


def faithfulness_table(faith) -> None:
    """The faithfulness comparison: one row per method."""
    st.dataframe([{
        t("attributions.method"): t(f"attributions.m_{row.method}"),
        t("attributions.comprehensiveness_col"): round(row.comprehensiveness, 4),
        t("attributions.sufficiency_col"): round(row.sufficiency, 4),
        t("attributions.completeness_error"): "—" if row.completeness_error is None
        else f"{100 * row.completeness_error:.3f}%",
        t("attributions.seconds"): round(row.seconds, 2),
    } for row in faith], hide_index=True, key="attr_faith_table")


def sampling(r) -> None:
    """A sampled attribution's method, parameters and sampling noise (the agreement of two seeds' runs)."""
    s = r.sampling
    st.caption(t(f"sampled.about_{r.method}"))
    st.caption(t("sampled.params_tokens" if r.method == "gradient_shap" else "sampled.params_words",
                 samples=s.n_samples, seed=s.seed, per_eval=s.perturbations_per_eval, features=s.features))
    if s.underdetermined:
        st.caption(t("sampled.underdetermined", features=s.features, samples=s.n_samples))
    if s.agreement is None:
        st.caption(t("sampled.agreement_none", second=s.second_seed))
        return
    st.caption(t("sampled.agreement", second=s.second_seed, rho=s.agreement))


def pair_column(where, columns, guess: str | None) -> str:
    """The "Text B / pair column" picker of the Data, Label audit and Fine-tune pages (one value for all
    three): a file with other columns starts it at `guess` (the header's pair, or the Data page's pick),
    "—" is one text. Returns the column, or "" for none."""
    ss = st.session_state
    options = ["—", *columns]
    if ss.get("data_pair_columns") != tuple(columns) or ss.get("data_pair_column") not in options:
        ss["data_pair_columns"] = tuple(columns)
        ss["data_pair_column"] = guess if guess in columns else "—"
    picked = where.selectbox(t("data.pair_column"), options, **sticky("data_pair_column"))
    return "" if picked == "—" else picked


def guessed_columns(frame, cols: list[str], text_key: str, label_key: str) -> None:
    """Start the column pickers on the columns the report would guess (guess_columns) when they hold
    no column of this file, so the page shows what it uses instead of "—"."""
    from explorer.data.dataset import guess_columns

    ss = st.session_state
    if not {ss.get(text_key), ss.get(label_key)} - set(cols):
        return
    try:
        text, labels = guess_columns(frame)
    except ExplorerError:
        text, labels = "—", ()
    for key, value in ((text_key, text), (label_key, ",".join(labels))):
        ss[key] = value if value in cols else "—"  # several 0/1 label columns: "—" (data_in_use names them)


_TOKEN_FLAGS = ("special", "continues_word", "unknown")


def token_table(rows: list[dict]) -> None:
    """The Tokens page's table of model.tokens.token_rows: its three flags as one "kind" column (three
    checkbox columns, mostly empty, before), and a blank word for a special token, which has none ("None")."""
    shown = [{**{k: v for k, v in r.items() if k not in _TOKEN_FLAGS},
              "word": "" if r["word"] is None else str(r["word"]),
              "kind": ", ".join(t(f"tokens.col_{k}") for k in _TOKEN_FLAGS if r[k])} for r in rows]
    render.table(render.headers(shown, "tokens.col_"))


def compare_checkbox(where, name: str) -> bool:
    """The Data page's "Check against '<checkpoint>'" box. A folder is named by its last part, in full in the
    help: a path has no space to wrap at, and a narrow column cut it to '…/sent…' (#33)."""
    short = Path(name).name or name
    return where.checkbox(t("data.compare", name=plain(short)), help=plain(name) if short != name else None,
                          **sticky("data_compare", True))


def data_in_use(src, report) -> None:
    """Which file, which fixed version of it and which columns Label audit and Fine-tune use; a way
    back to the file as given."""
    pair = {"pair": plain(src.text_pair_column)} if src.text_pair_column else {}
    st.caption(t("data.using_pair" if pair else "data.using", title=plain(src.title()), text=plain(report.text_column),
                 labels=plain(", ".join(report.label_columns)), **pair))
    if src.version > 1:
        st.button(t("data.original"), key="data_original", on_click=drop_data_versions, args=(src.origin,))


def label_summary(report) -> None:
    """A label report's rows, problem type, loss and label counts (the Data page)."""
    m1, m2, m3 = st.columns(3)
    m1.metric(t("data.rows"), report.rows)
    m2.metric(t("data.problem_type"), t(f"data.ptype_{report.problem_type}"), help=report.problem_type)
    m3.metric(t("data.loss"), report.loss)
    if report.labels:
        names, counts = zip(*report.labels)
        st.plotly_chart(plots.label_bars(names, counts, t("data.counts_title"), t("data.label_axis"),
                                         t("data.count_axis"), fmt=".0f"), key="data_counts")
    if not report.issues:
        st.success(t("data.no_issues"))


def mapping_check(report) -> None:
    """The CSV's labels against the checkpoint's predictions: accuracy before and after the best
    one-to-one mapping, and the confusion behind it (the Data page)."""
    st.subheader(t("data.mapping_title"))
    a1, a2 = st.columns(2)
    metric = "acc" if report.agreement == "accuracy" else "f1"  # multi-label: mean per-label F1
    a1.metric(t(f"data.{metric}_before"), f"{report.accuracy_before:.1%}")
    a2.metric(t(f"data.{metric}_after"), f"{report.accuracy_after:.1%}")
    rows, cols = list(report.confusion_rows), list(report.confusion_cols)
    # Columns in the rows' order where the names match, so the diagonal is "same name" and a permutation shows
    # off it; the checkpoint's own id order, when it differs, is said in a caption (#33).
    order = [cols.index(n) for n in rows if n in cols] + [j for j, n in enumerate(cols) if n not in rows]
    st.plotly_chart(plots.confusion_heatmap(np.asarray(report.confusion)[:, order], rows, [cols[j] for j in order],
                                            t("data.confusion_title"), t("data.predicted_axis"), t("data.csv_axis"),
                                            t("data.count_axis")),
                    key="data_confusion")
    if order != sorted(order):
        st.caption(t("data.confusion_order", ids=plain(", ".join(f"{j}: {n}" for j, n in enumerate(cols)))))


def tag_data(raw: bytes, name: str) -> None:
    """Token data (a CoNLL file, a tokens/tags CSV) on the Data page: the tag checks, against the chosen
    checkpoint when asked, and then the page stops. Sentence data (and files no reader takes, which the
    CSV reader words itself) pass through untouched."""
    from explorer.data import tags
    from explorer.data.tag_report import tag_report

    try:
        if tags.layout(raw, name) == "csv":
            return
    except ExplorerError:
        return
    sel = selection()
    digest = hashlib.sha1(raw).hexdigest()
    # The Fine-tune page trains a token head on it (token_view.token_finetune), whichever checkpoint is picked.
    set_data_source(DataSource(raw, name, "", "", origin=digest))
    use_ck = compare_checkbox(st, sel.name)
    try:
        ck = checkpoint(sel.name, sel.seed) if use_ck else None
        with st.status(t("data.checking", name=plain(sel.name)) if use_ck else t("data.reading"),
                       expanded=False) as status:
            key = (digest, name, sel.name if use_ck else None, sel.seed)
            report, seconds = memo("data_tags", key, lambda: timed(lambda: tag_report(
                tags.read_tags(raw, id2label=ck.model.config.id2label if ck else None, name=name), ck)))
            status.update(label=t("data.checked", seconds=f"{seconds:.1f}"), state="complete")
    except ExplorerError as err:
        error(err)
        st.stop()
    set_data_source(DataSource(raw, name, "", "", tuple(n for n, _ in report.tags), origin=digest))
    tag_checks(report)
    st.stop()


def tag_checks(report) -> None:
    """A tag report: sizes and scheme, how labels meet subwords, tag counts, issues with examples of invalid
    sequences, and the mapping check against the checkpoint."""
    m1, m2, m3 = st.columns(3)
    m1.metric(t("data.tags_sentences"), report.sentences)
    m2.metric(t("data.tags_words"), report.words)
    m3.metric(t("data.tags_scheme"), report.scheme)
    for note in report.notes:
        st.info(plain(note.message(lang())))
    names, counts = zip(*report.tags)
    st.plotly_chart(plots.label_bars(names, counts, t("data.tags_counts_title"), t("data.label_axis"),
                                     t("data.count_axis"), fmt=".0f"), key="data_tag_counts")
    for issue in report.issues:
        st.warning(f"**{t('data.issue_' + issue.kind)}**: {plain(issue.message.message(lang()))}")
    if report.invalid_examples:
        st.dataframe([{t(f"data.tags_col_{k}"): v for k, v in row.items()} for row in report.invalid_examples],
                     key="data_tag_invalid")
    if report.confusion is not None:
        mapping_check(report)
    if report.suggested_mapping:
        st.table([{t("data.col_csv"): plain(a), t("data.col_checkpoint"): plain(b)}
                  for a, b in report.suggested_mapping.items()])
    if not report.issues:
        st.success(t("data.no_issues"))


def label_fixes(report, fixed_csv: bytes, file_name: str) -> None:
    """Both fixes for a suggested label mapping: which side to change, the corrected CSV, and the
    id2label/label2id to paste into the checkpoint's config.json (the Data page)."""
    st.subheader(t("data.fix_title"))
    st.info(plain(report.fix["advice"].message(lang())))
    stem = file_name.rsplit(".", 1)[0] or "data"
    st.download_button(t("data.download_csv"), fixed_csv, file_name=f"{stem}-corrected.csv", mime="text/csv",
                       key="data_fixed_csv", help=t("plain.csv_guard"), on_click="ignore")
    st.caption(t("data.config_paste"))
    st.code(json.dumps(report.fix["config"], indent=1, ensure_ascii=False), language="json")


def audit_projector(found, flag, key: tuple, seed: int) -> None:
    """The audit's features projected to 2-D, coloured by given or suggested label or by flag (the
    Label audit page); `flag` marks the flagged rows, `key` names the audit run for the memo."""
    from explorer.model.problem import ProblemType
    from explorer.explain.projector import available, project
    from explorer.plots import audit as aplots

    data = found.data
    st.subheader(t("audit.projector"))
    p1, p2 = st.columns(2)
    method = p1.radio(t("audit.method"), available(), key="audit_method", horizontal=True,
                      format_func=lambda x: x.upper())
    # Regression values are not groups: colour by flag only.
    colour = p2.radio(t("audit.colour"), ("flag",) if data.problem_type == ProblemType.REGRESSION else ("given", "predicted", "flag"),
                      key="audit_colour", horizontal=True, format_func=lambda x: t(f"audit.colour_{x}"))
    proj = memo("audit_projection", (key, method), lambda: project(found.vectors, method, seed=seed))
    if proj.subsampled:
        st.caption(t("audit.subsampled", shown=len(proj.rows), total=proj.total))
    name_of = {"given": found.given, "predicted": found.suggested,
               "flag": lambda r: t("audit.is_flagged") if flag[r] else t("audit.not_flagged")}[colour]
    st.plotly_chart(aplots.projection(proj.xy, [str(name_of(r)) for r in proj.rows], list(data.texts), proj.rows,
                                      t("audit.projector_title", method=proj.method.upper()),
                                      t(f"audit.colour_{colour}")), key="audit_projector")


def audit_confusion(found) -> np.ndarray:
    """Given against predicted label (single-label data), where a click on a cell selects its rows.
    Returns the rows to list: the clicked cell's, least label quality first, else the flagged ones."""
    from explorer.model.problem import ProblemType, confusion_counts
    from explorer.plots import audit as aplots

    data = found.data
    if data.problem_type != ProblemType.SINGLE:
        return found.flagged
    st.subheader(t("audit.confusion"))
    names, pred = list(data.label_names), found.predicted
    counts = confusion_counts(data.y, pred, len(names))
    # A chart's selection cannot be set from code: clearing it draws the chart under a new key.
    cleared = st.session_state.get("audit_cell_cleared", 0)
    event = st.plotly_chart(aplots.confusion_cells(counts, names, names, t("audit.confusion_title"),
                                                   t("audit.predicted_axis"), t("audit.given_axis"), t("audit.count")),
                            key=f"audit_confusion_{cleared}", on_select="rerun", selection_mode="points")
    points = event.selection.points if event else []
    if not points:
        st.caption(t("audit.click_cell"))
        return found.flagged
    given, predicted = (int(v) for v in points[0]["customdata"])  # x and y are the escaped names
    cell = np.flatnonzero((data.y == given) & (pred == predicted))
    rows = cell[np.argsort(found.quality[cell], kind="stable")]
    st.caption(t("audit.cell", given=plain(names[given]), predicted=plain(names[predicted]), n=len(rows)))
    st.button(t("audit.clear_cell"), key="audit_clear_cell", help=t("audit.clear_cell_help"),
              on_click=lambda: st.session_state.update(audit_cell_cleared=cleared + 1))
    return rows


def model_downloads() -> None:
    """Any of this session's fine-tuned models (the latest first) as a zip: built once per model, on
    request and with a progress bar, then served from disk (session_zip)."""
    names = session_checkpoint_names()[::-1]
    if not names:
        return
    ss = st.session_state
    if ss.get("ft_download_newest") != names[0]:  # a new model: the picker moves to it (a kept pick would not)
        ss["ft_download_newest"] = ss["ft_download_model"] = names[0]
    pick = st.selectbox(t("finetune.download_model"), names, key="ft_download_model",
                        help=t("finetune.download_model_help"))
    ready = session_zip_ready(pick)
    if ready is not None:
        st.download_button(t("finetune.download"), ready, file_name=f"{pick}.zip", mime="application/zip",
                           key="ft_download", on_click="ignore")
    elif st.button(t("finetune.prepare"), key="ft_prepare"):
        report = progress_to(st.progress(0.0, text=t("finetune.packing", name=plain(pick))))
        try:
            session_zip(pick, lambda frac, _msg: report(frac, t("finetune.packing", name=plain(pick))))
        except ExplorerError as err:
            error(err)
            return
        st.rerun()  # drawn again with its download button


def epoch_progress(job) -> list[dict]:
    """A fine-tune's progress bar: the epoch running ("Epoch 1 of 5 running…" from the start, not "Epoch 0"),
    then the epochs done; returns the history so far."""
    hist = [report.row for report in job.progress]  # finetune.EpochReport
    total = st.session_state.get("ft_total") or (job.progress[-1].epochs if hist else 1)
    text = t("finetune.progress", done=len(hist), total=total) if job.done or len(hist) >= total else \
        t("finetune.progress_running", epoch=len(hist) + 1, total=total)
    st.progress(len(hist) / total if hist else 0.0, text=text)
    return hist


def kept_mark(job) -> tuple[int, str]:
    """(epoch, name) to mark on a fine-tune's curve: the epoch kept, once the job is done; (0, "") before."""
    res = job.result if job.done else None
    return (res.best_epoch, t("finetune.kept_mark")) if res is not None and res.best_epoch else (0, "")


def finetune_result(res, name: str) -> None:
    """A finished fine-tune: which epoch was kept and why, its validation metrics and confusion matrix."""
    planned = res.epochs or len(res.history)  # after a Stop, more than ran
    if res.stopped:
        st.info(t("finetune.stopped_at", epoch=len(res.history), total=planned))
    st.success(t("finetune.done", name=plain(name), seconds=f"{res.train_seconds:.1f}"))
    if res.best_epoch:  # 0: stopped before an epoch ended, nothing was kept from one
        st.caption(t(f"finetune.kept_{res.kept_by}", epoch=res.best_epoch, total=planned))
    for col, (k, v) in zip(st.columns(len(res.metrics)), res.metrics.items()):
        col.metric(t(f"finetune.metric_{k}"), f"{v:.3f}")
    if res.confusion is not None:
        st.plotly_chart(plots.confusion_heatmap(res.confusion, res.labels, res.labels, t("finetune.confusion_title"),
                                                t("finetune.predicted_axis"), t("finetune.true_axis"),
                                                t("finetune.count")), key="ft_confusion")


def finetune_job(names: dict[str, str], running: bool) -> None:
    """The Fine-tune page's job below its Start button, for token data (token_view.token_finetune): its
    place in line, then the progress and curves of `names` ({history key: legend}) redrawn every second,
    then the result, registered once as a session model (the sidebar redrawn with it), and the downloads."""
    import dataclasses


    ss = st.session_state

    @st.fragment(run_every=1.0 if running else None)
    def live():
        guarded(_live)  # a fragment's own reruns do not pass through app.py's guard

    def _live():
        job = ss.get("ft_job")
        if job is None or render.job_queue(job):
            return
        hist = epoch_progress(job)
        if hist:
            st.plotly_chart(plots.training_curves(hist, names, t("finetune.curve_title"), t("finetune.epoch_axis"),
                                                  t("finetune.value_axis"), *kept_mark(job)), key="ft_curve")
        if running and job.done:
            st.rerun()  # finished: redraw the whole page with the results

    live()
    job = ss.get("ft_job")
    if job is not None and job.done and job.error:
        error(job.error)
    elif job is not None and job.done and job.result is not None:
        if ss.get("ft_registered") != job.name:
            register_session_checkpoint(job.result.checkpoint)
            # From here the model lives only in the bounded store, so eviction really frees it.
            job.result = dataclasses.replace(job.result, checkpoint=None)
            ss["ft_registered"] = job.name
            st.rerun()
        finetune_result(job.result, job.name)
    model_downloads()


def leave_one_out(a):
    """The Lesson's leave-one-out for the sidebar's analysis `a`: (words, support), or None while there is none.
    One encoder pass per word: on a long text it asks first and runs as a job, and drops only the first
    whatif.LOO_MAX_WORDS words unless "all words" is ticked (a caption says so)."""
    sel = selection()
    n, costly = whatif.loo_words(a), whatif.loo_is_costly(a)
    capped = costly and n > whatif.LOO_MAX_WORDS and not st.checkbox(
        t("lesson.loo_all", n=n), key="lesson_loo_all", help=t("lesson.loo_all_help", cap=whatif.LOO_MAX_WORDS))
    limit = whatif.LOO_MAX_WORDS if capped else None
    key = (sel.key(), limit)
    found = memo("loo", key)
    if found is None:
        ck, hd = checkpoint(sel.name, sel.seed), current_head()
        # What leave-one-out reads, without the ~80 MB of a long text's attentions and hidden states: a job
        # waiting in line holds its closure (the cache's copy may be evicted meanwhile).
        light = dataclasses.replace(a, attentions=None, hidden_states=None, flow=None)
        work = lambda p: whatif.leave_one_out(ck, hd, light, progress=p, limit=limit)  # noqa: E731
        rows = min(n, limit or n)
        if costly:
            found = render.costly_job("lesson_loo", key, t("memory.loo_costly", n=rows, limit=whatif.LOO_WARN_WORDS),
                                      work, t("memory.loo_running"), size=(None, rows))
            if found is None:
                return None
        else:
            bar = st.progress(0.0, text=t("memory.loo_running"))
            found = work(lambda f, _msg: bar.progress(min(1.0, f), text=t("memory.loo_running")))
            bar.empty()
        found = memo("loo", key, lambda: found)
    if capped:
        st.caption(t("lesson.loo_capped", cap=whatif.LOO_MAX_WORDS, n=n))
    return found
