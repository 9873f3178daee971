"""A session's side of the app: its owner key (its fine-tuned models and jobs), language, sidebar
selection and widget values that survive reruns.

A session's own fine-tuned models live in MODELS under unique names, bounded per session and per
process (explorer/runtime/session_models.py); the session holds only its owner key.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Hashable, Iterable

import streamlit as st
from streamlit.logger import get_logger

from explorer.model import checkpoints
from explorer.runtime import jobs, scratch, session_models
from explorer.text import i18n
from explorer.train import finetune

if TYPE_CHECKING:
    from explorer.data.audit import LabelAudit
    from explorer.data.dataset import Table
    from explorer.explain.dataset import DatasetExplanation
    from explorer.scan.report import ScanReport

log = get_logger("head_explorer")

MODELS = session_models.ModelStore()  # every session's fine-tuned models, within the bounds
# Background jobs (fine-tunes, label audits, long attributions), HEAD_EXPLORER_TRAINING at once.
JOBS = jobs.Jobs()


class _Owner:
    """A session's key in MODELS and JOBS. When Streamlit forgets the session, this object dies and
    its models are dropped and its jobs stopped with it."""

    def __init__(self):
        self.id = uuid.uuid4().hex
        weakref.finalize(self, MODELS.drop_owner, self.id)
        for forget in WHEN_GONE:
            weakref.finalize(self, forget, self.id)
        weakref.finalize(self, JOBS.stop_owner, self.id)


# What else goes with a session, each called with its owner id: modules above this one register here (the
# analyses cache drops the session's page results) instead of this module importing them.
WHEN_GONE: list[Callable[[str], None]] = []


def owner() -> str:
    ss = st.session_state
    if "_model_owner" not in ss:  # not setdefault: a spare _Owner would die at once and run its finalizer
        ss["_model_owner"] = _Owner()
    return ss["_model_owner"].id


def lang() -> str:
    return st.session_state.get("lang", "en")


def t(key: str, **fmt) -> str:
    return i18n.t(key, lang(), **fmt)


def tn(key: str, count: int, **fmt) -> str:
    """`key` in the plural form `count` takes in the session's language (ngettext), with n=count."""
    return i18n.n(key, count, lang(), **fmt)


def register_session_checkpoint(ck: checkpoints.Checkpoint) -> None:
    """Make a per-session model (e.g. just fine-tuned) selectable on every page of this session."""
    MODELS.add(owner(), ck)


def session_checkpoint_names() -> list[str]:
    return MODELS.names(owner())


def session_checkpoint(name: str) -> checkpoints.Checkpoint | None:
    return MODELS.get(owner(), name)


def session_zip(name: str, progress: jobs.Progress | None = None) -> Path:
    """The session model's zip (an HF folder), built on the first request with `progress(fraction, "")` and
    kept on disk in the process's scratch folder while the model is in MODELS; zips of models evicted
    since are removed first, so the disk holds at most what the store bounds."""
    folder = scratch.process_folder()
    for old in folder.glob("*.zip"):
        if not MODELS.holds(old.stem):
            old.unlink(missing_ok=True)
    ck = MODELS.get(owner(), name)
    if ck is None:  # evicted since the page was drawn
        raise finetune.FinetuneError("model_evicted", name=name)
    return finetune.zip_once(ck, folder, progress=progress)


def session_zip_ready(name: str) -> Callable[[], bytes] | None:
    """Deferred download data for the model's zip when it is built (read on click, never kept in the
    session), else None."""
    path = scratch.process_folder() / f"{name}.zip"
    if not path.is_file() or session_checkpoint(name) is None:
        return None

    def read() -> bytes:
        if not path.is_file():  # the model was evicted (and its zip removed) since the page was drawn
            raise finetune.FinetuneError("model_evicted", name=name)
        return path.read_bytes()

    return read


def client_address() -> str | None:
    """The browser's address as the websocket's peer: behind a proxy on this machine that passes
    X-Forwarded-For, the visitor's (uvicorn trusts that header from 127.0.0.1); None for this machine itself (a
    proxy that passes nothing, or a local visitor), and outside a server (AppTest): no per-client cap then."""
    try:
        return st.context.ip_address
    except Exception:  # noqa: BLE001 - no script context (a callback's thread in tests): unknown
        return None


def session_alive() -> Callable[[], bool] | None:
    """Is this session's browser still connected? Asked from the watchdog thread, hence the ids captured
    now; None without a server (bare mode), where only the owner's finalizer stops a job."""
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not runtime.exists():
        return None
    rt, session_id = runtime.get_instance(), ctx.session_id
    return lambda: rt.is_active_session(session_id)  # thread-safe in Streamlit's Runtime


def stop_if_gone() -> None:
    """For long work on the script thread (the label audit, attributions): end this run (st.stop) once
    its tab has been disconnected for jobs.GRACE_S seconds. Streamlit stops it only when it drops the
    session, minutes later; until then the work would keep a core for nobody."""
    alive = session_alive()
    ss = st.session_state
    if alive is None or alive():
        ss.pop("_gone_since", None)
        return
    import time

    since = ss.setdefault("_gone_since", time.monotonic())
    if time.monotonic() - since >= jobs.GRACE_S:
        log.info("script run stopped: its tab has been gone %.1f s", time.monotonic() - since)
        st.stop()


def progress_to(bar) -> jobs.Progress:
    """A core `progress(fraction, message)` drawn on `bar` (clamped to [0, 1]) that also ends the run
    once the tab is gone (stop_if_gone). For explorer/ui/running.py, which draws every progress bar."""
    def report(frac: float, msg: str) -> None:
        stop_if_gone()
        bar.progress(min(1.0, max(0.0, frac)), text=msg)

    return report


@dataclasses.dataclass(frozen=True)
class Selection:
    """The sidebar's picks: checkpoint name, head kind's name (ui.head builds the Head), text, seed and the
    optional text B ("" for none)."""
    name: str
    head_name: str
    text: str
    seed: int
    text_pair: str = ""

    def key(self, *fields: str) -> tuple:
        """The picks a result depends on (`fields`, by name; every pick by default) as a hashable key: the one way
        a cache key (memo, the analyses' cache, a data page's run) is built from the sidebar."""
        return tuple(getattr(self, f) for f in fields) if fields else dataclasses.astuple(self)


OTHER = "other…"


def sidebar_defaults() -> dict:
    """The sidebar's first values, set in one place: app.py starts every session with them
    (set_sidebar_defaults), and selection() reads them where a page runs without the sidebar (AppTest's
    switch_page). The text is English whatever the language: the built-in models only read English."""
    return {"lang": "en", "checkpoint": checkpoints.DEFAULT_CHECKPOINT, "checkpoint_other": "", "head": "own",
            "text": i18n.t("app.text_default", "en"), "text_pair": "", "seed": 0, "presenter": False}


def set_sidebar_defaults() -> None:
    """Give each sidebar value its first value where the session (or the link it came by) has none yet."""
    ss = st.session_state
    for key, value in sidebar_defaults().items():
        ss.setdefault(key, value)


def selection() -> Selection:
    """The picks as made in the sidebar."""
    ss, first = st.session_state, sidebar_defaults()
    pick = lambda key: ss.get(key, first[key])  # noqa: E731
    name = pick("checkpoint_other") if pick("checkpoint") == OTHER else pick("checkpoint")
    return Selection(name or first["checkpoint"], pick("head"), pick("text"), int(pick("seed")),
                     (pick("text_pair") or "").strip() and pick("text_pair"))


def other_is_empty() -> bool:
    """Is "other…" picked with its path still empty?"""
    ss = st.session_state
    return ss.get("checkpoint") == OTHER and not (ss.get("checkpoint_other") or "").strip()


_STICKY = "_sticky_keys"  # the widget keys sticky() was asked to keep, for keep_widgets()


def sticky(key: str, default=None, options: Iterable | None = None) -> dict:
    """Widget kwargs (`key=`) for a widget whose value is kept across reruns, page switches and
    language switches: the one widget-persistence mechanism.

    Streamlit drops a widget's value when a run does not draw it (another page was open) and gives a
    widget a new identity when its label changes (a language switch). keep_widgets(), called by
    app.py at the start of every run, re-assigns each kept key through session state, which makes
    the value the user's own: it survives both. `default` is the first value: pass it here, not to
    the widget, which would warn that its value was also set through session state. Not for buttons,
    uploaders, editors or charts, whose keys cannot be set.

    `options`, for a choice widget: a kept value that is not one of them (another model's layer, a value a
    link or an older run left) is dropped before the widget or the page reads it, and `default` (or the
    widget's own first choice) stands in: a page's code compares the value with its options.
    """
    ss = st.session_state
    ss.setdefault(_STICKY, set()).add(key)
    if options is not None and key in ss and not _is_option(ss[key], options):
        del ss[key]
    if default is not None:
        ss.setdefault(key, default)
    return {"key": key}


def _is_option(value, options: Iterable) -> bool:
    # Same type too: True == 1 and 1.0 == 1, but a selectbox of ints shows neither as one of its options.
    return any(type(value) is type(o) and value == o for o in options)


def keep_widgets() -> None:
    """Re-assign every sticky widget's value (see sticky); call it on every run before any widget is drawn.
    Also forgets what Streamlit keeps of widgets that are gone (drop_stale_widget_metadata)."""
    drop_stale_widget_metadata()
    ss = st.session_state
    for key in ss.get(_STICKY, ()):
        if key in ss:
            ss[key] = ss[key]


def drop_stale_widget_metadata() -> None:
    """Forget the registrations of this session's widgets that have no value left.

    Streamlit 1.67 drops a gone widget's value after each run but keeps its registration (WStates'
    widget_metadata) for the life of the session. A chart with on_select gets a new element id for every
    new figure, and its registration holds the callback, whose globals are the page run's own: its
    analysis and figures. So every text drawn on the Inside-the-encoder page kept ~77 MB for as long as the
    session lived (measured: +25 MB per text over 36 texts through 4 pages, no plateau). A registration
    whose widget holds a value (one the browser shows, or this run registered) is kept.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    safe = getattr(ctx, "session_state", None)
    state = getattr(safe, "_state", None)  # SafeSessionState -> SessionState (no public API for this)
    widgets = getattr(state, "_new_widget_state", None)
    if widgets is None:  # AppTest's or a bare run's state: nothing Streamlit kept across runs
        return
    with safe._lock:
        live = set(widgets.states) | set(state._old_state)
        for wid in [w for w in widgets.widget_metadata if w not in live]:
            del widgets.widget_metadata[wid]


# ---- typed session data: what the pages hand each other ------------------------------------------
@dataclasses.dataclass(frozen=True)
class DataSource:
    """The CSV the Data page prepared for the Audit and Fine-tune pages (the demo tweets until then)."""
    bytes: bytes
    name: str
    text_column: str
    label_column: str  # comma-separated for multi-label
    labels: tuple[str, ...] = ()
    text_pair_column: str = ""  # the second text of sentence pairs; "" for one text
    columns: tuple[str, ...] = ()  # the CSV's header, for the pages' pair pickers
    origin: str = ""  # sha1 of the file as given: the key of its fixed versions (data_versions)
    version: int = 1  # 1: the file as given; each fix applied to it (merge, mapping, audit) adds one
    changed: int = 0  # rows the latest fix changed
    # The Data page's suggested mapping (CSV label -> checkpoint label) and the checkpoint it was found on:
    # a row opened from the Label audit explains the class that checkpoint predicts for the row's label.
    mapping: tuple[tuple[str, str], ...] = ()
    mapping_checkpoint: str = ""

    @functools.cached_property
    def digest(self) -> str:
        """The data's hash (sha1 of these bytes): worked out once per source; a new version is a new source."""
        return sha1(self.bytes)

    def key(self, *options: Hashable) -> tuple:
        """A result's key on this data: its hash and columns, then the page's `options` (its own picks, and the
        sidebar's as Selection.key gives them). A data page's run is kept for it (datapage.run_on_data)."""
        return (self.digest, self.text_column, self.label_column, *options)

    def mapping_for(self, checkpoint: str) -> dict[str, str] | None:
        """The suggested mapping found against `checkpoint`, else None."""
        return dict(self.mapping) if self.mapping and checkpoint == self.mapping_checkpoint else None

    def title(self) -> str:
        """The file's name, and which fixed version of it this is."""
        if self.version <= 1:
            return self.name
        return tn("data.version", self.changed, name=self.name, version=self.version)

    def short_name(self) -> str:
        """The file's stem, and its fixed version's number after the first: what a fine-tuned model's name
        says of its data (finetune.session_name), e.g. tweets or tweets_v2."""
        stem = Path(self.name).stem or self.name
        return stem if self.version <= 1 else f"{stem}_v{self.version}"


@dataclasses.dataclass(frozen=True)
class DataVersion:
    """A fixed version of a file the Data page read: what Data, Label audit and Fine-tune use instead."""
    bytes: bytes
    number: int
    changed: int  # rows that differ from the version before


@dataclasses.dataclass(frozen=True)
class Upload:
    """An uploaded file's bytes, kept because an uploader comes back empty after a page switch."""
    bytes: bytes
    name: str


@dataclasses.dataclass(frozen=True)
class AppliedMapping:
    """A label mapping the user applied on the Data page, for a file (digest) and a checkpoint."""
    digest: str
    checkpoint: str
    mapping: dict


@dataclasses.dataclass(frozen=True)
class DataRun:
    """A data page's last run (the Label audit's LabelAudit, Dataset explanations' DatasetExplanation, the Scan's
    ScanReport): its inputs (DataSource.key), the hash of the data it read, its result and the data's table,
    kept in session state until the inputs change."""
    key: tuple
    digest: str
    found: LabelAudit | DatasetExplanation | ScanReport
    table: Table


DATA_KEY = "data_csv"  # where the Data page leaves its DataSource


def sha1(raw: bytes) -> str:
    """A file's hash: what DataSource.digest and .origin hold, and what a fixed version is filed under."""
    return hashlib.sha1(raw).hexdigest()


def data_source() -> DataSource:
    """The Data page's CSV, or the demo tweets (60 per class) before the Data page has run."""
    src = st.session_state.get(DATA_KEY)
    return src if src is not None else _demo_source()


@functools.lru_cache(maxsize=1)
def _demo_source() -> DataSource:
    """The demo tweets, read once per process: reading them takes 0.7-1.3 s of pandas (holding the GIL), and
    the Fine-tune and Audit pages ask on every run (in the classroom bench, every 2 s per fine-tune student)."""
    from explorer.data.dataset import demo_frame

    demo = demo_frame(per_class=60, seed=0)
    raw = demo.to_csv(index=False).encode()
    return DataSource(raw, "demo.csv", "text", "label", tuple(sorted(demo["label"].unique())),
                      columns=tuple(demo.columns), origin=sha1(raw))


def set_data_source(src: DataSource) -> DataSource:
    st.session_state[DATA_KEY] = src
    return src


VERSIONS_KEY = "data_versions"  # {origin: DataVersion}, the latest fixed version of each file


def data_version(origin: str) -> DataVersion | None:
    return st.session_state.get(VERSIONS_KEY, {}).get(origin)


def file_source(raw: bytes, name: str) -> DataSource:
    """A file the Data page reads, as its latest fixed version (data_version) where fixes were applied to it; its
    columns are the Data page's to set."""
    origin = sha1(raw)
    version = data_version(origin)
    if version is None:
        return DataSource(raw, name, "", "", origin=origin)
    return DataSource(version.bytes, name, "", "", origin=origin, version=version.number, changed=version.changed)


def add_data_version(origin: str, before: bytes, after: bytes) -> DataVersion:
    """Keep `after` (the fixed `before`) as the next version of the file `origin` and return it."""
    from explorer.data.dataset import changed_rows, read_csv

    prev = data_version(origin)
    version = DataVersion(after, (prev.number if prev else 1) + 1, changed_rows(read_csv(before), read_csv(after)))
    st.session_state.setdefault(VERSIONS_KEY, {})[origin] = version
    return version


def drop_data_versions(origin: str) -> None:
    """Back to the file as given."""
    st.session_state.get(VERSIONS_KEY, {}).pop(origin, None)


def use_data_version(src: DataSource, after: bytes) -> DataSource:
    """Make `after`, a fixed `src`, the dataset every page uses (its next version) and return it."""
    version = add_data_version(src.origin, src.bytes, after)
    new = dataclasses.replace(src, bytes=after, version=version.number, changed=version.changed)
    set_data_source(new)
    return new
