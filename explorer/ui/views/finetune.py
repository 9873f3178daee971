"""The Fine-tune page (pages/finetune.py): train a private copy of the sidebar's checkpoint on the Data page's data
(or the demo), whichever kind it is: a CSV of texts and labels (finetune), or token data, a CoNLL file or a
tokens/tags CSV (finetune_tags: a token head, seqeval's entity metrics). The settings, the job (its place in
line, progress and curves, Stop, the kept epoch), the session model that joins the sidebar, and its export."""
from __future__ import annotations

import dataclasses

import streamlit as st

from explorer import plots
from explorer.text.errors import ExplorerError
from explorer.train.finetune import LEARNING_RATES, Settings
from explorer.runtime import jobs
from explorer.runtime.jobs import Job
from explorer.ui import (DataSource, checkpoint, draw_example, plain, register_session_checkpoint, run, selection,
                         session_checkpoint_names, session_zip, session_zip_ready, show_error, sticky, t)
from explorer.ui.running import stop_job
from explorer.ui.views import scan as scan_view
from explorer.ui.views.data import draw_pair_column

FINETUNE = "fine-tune"  # ui.run's name for it: the job's kind (one per session, its estimates, the log's lines)
START = "_ft_start_clicked"  # set by Start's callback, read once by the run it triggers
SENTENCE_METRICS = ("loss", "val_loss", "accuracy", "f1_micro", "mse")  # finetune's history keys
TOKEN_METRICS = ("loss", "val_loss", "precision", "recall", "f1", "accuracy")  # finetune_tags' history keys


def is_tag_data(src: DataSource) -> bool:
    """Is the data source token data: a CoNLL file or a tokens/tags CSV?"""
    from explorer.data import tags

    try:
        return tags.layout(src.bytes, src.name) != "csv"
    except ExplorerError:
        return False


def draw_finetune(src: DataSource) -> None:
    """The settings, Start and Stop, and the job below them, for either kind of data."""
    tagged = is_tag_data(src)
    if tagged:
        st.caption(t("tokenhead.ft_data", name=plain(src.title()), n=len(src.labels),
                     labels=plain(" ".join(src.labels[:16]))))
    else:
        st.caption(t("finetune.data", name=plain(src.title()), n=len(src.labels),
                     labels=plain(", ".join(map(str, src.labels[:12])))))
    options, pair = draw_settings(src, tagged)
    refused = None
    if tagged:
        st.caption(t("tokenhead.ft_head"))
    else:
        from explorer.train.finetune import check_head

        sel = selection()
        try:  # the sidebar's head, named; refused here in one line when this mode cannot train it
            kind = check_head(checkpoint(sel.name, sel.seed), Settings(mode=options["mode"], head=options["head"]))
            st.caption(t("finetune.head", head=options["head"], kind=kind))
        except ExplorerError as err:
            refused = err
            show_error(err)
    b1, b2 = st.columns(2)  # drawn below, once this run's Start has started the job
    metrics = TOKEN_METRICS if tagged else SENTENCE_METRICS
    job = draw_finetune_job(src, options, pair, {k: t(f"finetune.metric_{k}") for k in metrics})
    if job is None:  # nothing trained yet: what a run will draw
        draw_example(plots.examples.finetune_example(t), "ft_example")
    running = job is not None and not job.done
    b1.button(t("finetune.start"), key="ft_start", on_click=_ask_start,
              disabled=running or refused is not None, type="primary")
    b2.button(t("finetune.stop"), key="ft_stop", disabled=not running, on_click=stop_job, args=(FINETUNE,))


def _ask_start() -> None:
    """Start button: this click's run starts the fine-tune (draw_finetune_job), after reading its data."""
    st.session_state[START] = True


def draw_settings(src: DataSource, tagged: bool) -> tuple[dict, str]:
    """Mode, epochs, learning rate, batch, maximum length, the pair column (texts only) and early stopping:
    Settings' fields as a dict, and the pair column ("" for one text)."""
    sel = selection()
    c1, c2, c3 = st.columns(3)
    mode = c1.radio(t("finetune.mode"), ["head", "full"], format_func=lambda m: t(f"finetune.mode_{m}"),
                    **sticky("ft_mode", "head", options=("head", "full")))
    epochs = c2.number_input(t("finetune.epochs"), 1, 500, **sticky(f"ft_epochs_{mode}", 30 if mode == "head" else 3))
    # Learning rates live on a log scale: each step moves along 1-2-5 (a number stepper adds a constant).
    lr = c3.select_slider(t("finetune.lr"), LEARNING_RATES, format_func=lambda v: f"{v:.0e}",
                          **sticky(f"ft_lr_{mode}", 1e-3 if mode == "head" else 5e-5, options=LEARNING_RATES))
    c4, c5, c6 = st.columns(3)
    batch = c4.number_input(t("finetune.batch"), 1, 512, **sticky("ft_batch", 32))
    max_len = c5.number_input(t("finetune.max_length"), 8, 512, **sticky("ft_max_length", 128))
    pair = "" if tagged else draw_pair_column(c6, src.columns, src.text_pair_column)
    early = st.checkbox(t("finetune.early"), help=t("finetune.early_help"), **sticky("ft_early", True))
    return dict(mode=mode, head=sel.head_name, epochs=int(epochs), learning_rate=float(lr), batch_size=int(batch),
                max_length=int(max_len), seed=sel.seed, early_stopping=early), pair


def prepare_finetune(src: DataSource, options: dict, pair: str) -> tuple[str, jobs.Work, jobs.Size]:
    """Read the data and refuse in one line (ExplorerError) what cannot run, before a slot is taken: the
    model's name, the work (work(report, stopping), reporting each epoch's finetune.EpochReport) and its size
    (the queue's estimate: from fine-tunes of its kind and size). On token data a sentence checkpoint's encoder gets a new token head, as the CLI does."""
    from explorer.data import tags
    from explorer.data.dataset import prepare, read_csv
    from explorer.model.checkpoints import is_token_classifier
    from explorer.train.finetune import FinetuneError, check_head, check_size, finetune, session_name
    from explorer.train.finetune_tags import finetune_tags

    sel = selection()
    ck = checkpoint(sel.name, sel.seed)
    settings = Settings(**options)
    if is_tag_data(src):
        names = ck.model.config.id2label if is_token_classifier(ck) else None  # names numeric tags
        data = tags.read_tags(src.bytes, id2label=names, name=src.name)
        if settings.head != "own":  # the one head save_pretrained writes for a token classifier
            raise FinetuneError("finetune_own_head", native="own", head=settings.head)
        train, rows, kind = finetune_tags, len(data.words), f"tags-{settings.mode}"
    else:
        data = prepare(read_csv(src.bytes, name=src.name), src.text_column, src.label_column,
                       text_pair_column=pair)
        check_head(ck, settings)
        train, rows, kind = finetune, len(data.texts), settings.mode
    check_size(ck, settings, rows=rows)  # work and memory, before a slot is taken
    name = session_name(sel.name, mode=settings.mode, data=src.short_name(), epochs=settings.epochs)

    def work(report, stopping):  # runs off the script thread
        return train(ck, data, settings=settings, on_epoch=report, stop=stopping, name=name)

    return name, work, (kind, rows * settings.epochs)


def draw_model_downloads() -> None:
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
        packing = t("finetune.packing", name=plain(pick))
        try:  # started by the click, also after a Stop of an earlier one
            run("ft_zip", pick, lambda progress: session_zip(pick, lambda frac, _msg: progress(frac, packing)),
                start=True, running=packing)
        except ExplorerError as err:
            show_error(err)
            return
        st.rerun()  # drawn again with its download button


def draw_epoch_progress(job: Job) -> list[dict]:
    """A fine-tune's progress bar: the epoch running ("Epoch 1 of 5 running…" from the start, not "Epoch 0"),
    then the epochs done; returns the history so far."""
    hist = [report.row for report in job.progress]  # finetune.EpochReport
    started, planned = st.session_state.get("ft_total", ("", 0))
    total = planned if started == job.name else (job.progress[-1].epochs if hist else 1)
    text = t("finetune.progress", done=len(hist), total=total) if job.done or len(hist) >= total else \
        t("finetune.progress_running", epoch=len(hist) + 1, total=total)
    st.progress(len(hist) / total if hist else 0.0, text=text)
    return hist


def kept_mark(job) -> tuple[int, str]:
    """(epoch, name) to mark on a fine-tune's curve: the epoch kept, once the job is done; (0, "") before."""
    res = job.result if job.done else None
    return (res.best_epoch, t("finetune.kept_mark")) if res is not None and res.best_epoch else (0, "")


def draw_finetune_result(res, name: str) -> None:
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
        st.plotly_chart(plots.confusion_heatmap(res.confusion, res.labels, cols=res.labels,
                                                title=t("finetune.confusion_title"),
                                                x_title=t("finetune.predicted_axis"), y_title=t("finetune.true_axis"),
                                                count_name=t("finetune.count")), key="ft_confusion")


def draw_finetune_job(src: DataSource, options: dict, pair: str, names: dict[str, str]) -> Job | None:
    """The fine-tune below the Start button, started here in the run its click triggered: its place in line,
    then the progress and curves of `names` ({history key: legend}) redrawn every second, then the result,
    registered once as a session model (the sidebar redrawn with it), and every model of this session to
    download. Returns the session's fine-tune (one at a time), running or done, or None."""
    ss = st.session_state

    def draw_epochs(job: Job) -> None:
        hist = draw_epoch_progress(job)
        if hist:
            kept, kept_name = kept_mark(job)
            st.plotly_chart(plots.training_curves(hist, names, title=t("finetune.curve_title"),
                                                  x_title=t("finetune.epoch_axis"), y_title=t("finetune.value_axis"),
                                                  kept=kept, kept_name=kept_name), key="ft_curve")

    start, name, work, size = ss.pop(START, False), None, None, None
    if start:
        try:
            name, work, size = prepare_finetune(src, options, pair)
        except ExplorerError as err:
            show_error(err)
            start = False
    if start:  # the count is known before the first epoch ends
        ss["ft_total"] = (name, options["epochs"])
        scan_view.remember_origin(name, selection().name)
    job = run(FINETUNE, name, work, start=start, name=name, background=draw_epochs, size=size)
    if job is not None and job.done and job.error:
        show_error(job.error)
    elif job is not None and job.done and job.result is not None:
        if ss.get("ft_registered") != job.name:
            register_session_checkpoint(job.result.checkpoint)
            # From here the model lives only in the bounded store, so eviction really frees it.
            job.result = dataclasses.replace(job.result, checkpoint=None)
            ss["ft_registered"] = job.name
            st.rerun()  # the sidebar was drawn before this page: redraw it with the new model
        draw_finetune_result(job.result, job.name)
        scan_view.draw_compare_after_finetune(job.name)
    draw_model_downloads()
    return job
