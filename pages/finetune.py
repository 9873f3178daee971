"""Fine-tune: train a private copy of the sidebar's checkpoint on the Data page's CSV (or the demo)."""
import dataclasses

import streamlit as st

from explorer import plots, ui
from explorer.data.dataset import prepare, read_csv
from explorer.text.errors import ExplorerError
from explorer.train.finetune import LEARNING_RATES, Settings, check_head, check_size, finetune, session_name
from explorer.ui import sticky, t
from explorer.ui.token_view import token_finetune

ss = st.session_state
st.title(t("finetune.title"))
st.caption(t("finetune.intro"))

if ui.other_prompt():
    st.stop()
src = ui.data_source()  # the Data page's CSV, or the demo
if token_finetune(src):  # token data (CoNLL, tokens/tags CSV): a token head, its own flow
    st.stop()
st.caption(t("finetune.data", name=ui.plain(src.title()), n=len(src.labels),
             labels=ui.plain(", ".join(map(str, src.labels[:12])))))
name, seed, head = ui.selection().name, ui.selection().seed, ui.selection().head_name
c1, c2, c3 = st.columns(3)
mode = c1.radio(t("finetune.mode"), ["head", "full"], format_func=lambda m: t(f"finetune.mode_{m}"),
                **sticky("ft_mode", "head"))
epochs = c2.number_input(t("finetune.epochs"), 1, 500, **sticky(f"ft_epochs_{mode}", 30 if mode == "head" else 3))
# Learning rates live on a log scale: each step moves along 1-2-5 (a number stepper adds a constant).
lr = c3.select_slider(t("finetune.lr"), LEARNING_RATES, format_func=lambda v: f"{v:.0e}",
                      **sticky(f"ft_lr_{mode}", 1e-3 if mode == "head" else 5e-5))
c4, c5, c6 = st.columns(3)
batch = c4.number_input(t("finetune.batch"), 1, 512, **sticky("ft_batch", 32))
max_len = c5.number_input(t("finetune.max_length"), 8, 512, **sticky("ft_max_length", 128))
pair = ui.panels.pair_column(c6, src.columns, src.text_pair_column)
early = st.checkbox(t("finetune.early"), help=t("finetune.early_help"), **sticky("ft_early", True))
refused = None
try:  # the sidebar's head, named; refused here in one line when this mode cannot train it
    st.caption(t("finetune.head", head=head, kind=check_head(ui.checkpoint(name, seed), Settings(mode=mode, head=head))))
except ExplorerError as err:
    refused = err
    ui.error(err)

job = ss.get("ft_job")  # an explorer.runtime.jobs.Job
running = job is not None and not job.done


def _start():
    try:
        data = prepare(read_csv(src.bytes, name=src.name), src.text_column, src.label_column, text_pair_column=pair)
        ck = ui.checkpoint(name, seed)
        settings = Settings(mode=mode, head=head, epochs=int(epochs), learning_rate=float(lr),
                            batch_size=int(batch), max_length=int(max_len), seed=seed, early_stopping=early)
        check_head(ck, settings)
        check_size(ck, settings, len(data.texts))  # refused here, before a slot is taken
    except ExplorerError as err:
        ss["ft_error"] = err
        return
    model_name = session_name(name, mode, src.short_name(), int(epochs))
    try:  # one fine-tune per session: a second Start is refused and shows the first
        new = ui.start_job("fine-tune", model_name, lambda progress, stop: finetune(
            ck, data, settings, progress=progress, stop=stop, name=model_name),  # runs off the script thread
            size=(settings.mode, len(data.texts) * settings.epochs))  # its estimate: from fine-tunes of its mode
    except ExplorerError as err:
        ss["ft_error"], ss["ft_job"] = err, getattr(err, "first", None) or ss.get("ft_job")
        return
    if new is None:  # each run holds a model copy: bounded per process, and so is the line for a slot
        ss["ft_error"] = t("safety.training_busy")
        return
    ss["ft_job"], ss["ft_total"] = new, int(epochs)  # the count is known before the first epoch ends
    ss.pop("ft_error", None)


b1, b2 = st.columns(2)
b1.button(t("finetune.start"), key="ft_start", on_click=_start, disabled=running or refused is not None,
          type="primary")
b2.button(t("finetune.stop"), key="ft_stop", disabled=not running, on_click=lambda: ss["ft_job"].stop())
if ss.get("ft_error"):
    ui.error(ss["ft_error"])


@st.fragment(run_every=1.0 if running else None)
def live():
    ui.guarded(_live)  # a fragment's own reruns do not pass through app.py's guard


def _live():
    job = ss.get("ft_job")
    if job is None or ui.render.job_queue(job):  # waiting for a slot: its place, and Stop leaves the line
        return
    hist = ui.panels.epoch_progress(job)
    if hist:
        names = {k: t(f"finetune.metric_{k}") for k in ("loss", "val_loss", "accuracy", "f1_micro", "mse")}
        st.plotly_chart(plots.training_curves(hist, names, t("finetune.curve_title"), t("finetune.epoch_axis"),
                                              t("finetune.value_axis"), *ui.panels.kept_mark(job)), key="ft_curve")
    if running and job.done:
        st.rerun()  # finished: redraw the whole page with the results


live()
job = ss.get("ft_job")
if job is not None and job.done:
    if job.error:
        ui.error(job.error)
    elif job.result is not None:
        res = job.result
        if not ss.get("ft_registered") == job.name:
            ui.register_session_checkpoint(res.checkpoint)
            # From here the model lives only in the bounded store, so eviction really frees it.
            job.result = res = dataclasses.replace(res, checkpoint=None)
            ss["ft_registered"] = job.name
            st.rerun()  # the sidebar was drawn before this page: redraw it with the new model
        ui.panels.finetune_result(res, job.name)
ui.panels.model_downloads()  # every model of this session, not only the latest
