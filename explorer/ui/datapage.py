"""The data pages' one shape (Label audit, Dataset explanations, Scan): their head (title, intro, which data and
checkpoint they read), their one job on the Data page's data (a Run button, the job in the queue with its place in
line, progress and Stop, its result kept for its inputs; bad input one line; before the first run, a picture of what
the run draws), and a row of the data opened on another page.

A page names its work `what`: its messages are `{what}.intro`, `{what}.data`, `{what}.run`, `{what}.starting` and
`{what}.stop`, its button `{what}_run`, its result the session's `{what}_result` (a DataRun), and a page that opens
it with `{what}_autostart` set runs it at once."""
from __future__ import annotations

from typing import Callable, Hashable, Mapping, TypeVar

import streamlit as st

from explorer.data.dataset import Table, read_csv
from explorer.runtime.jobs import Progress
from explorer.text.errors import ExplorerError
from explorer.ui.cache import memo, show_other_prompt, timed
from explorer.ui.render import plain, show_error
from explorer.ui.running import run
from explorer.ui.session import DataRun, DataSource, Selection, data_source, selection, t

T = TypeVar("T")
OPEN = "_open_page"  # the page a row's callback asked for, opened by the next run (follow_open_row)


def open_data_page(page: str, what: str | None = None) -> tuple[DataSource, Selection]:
    """A data page's head: its title (`{page}.title`) and intro, the prompt for "other…"'s path (the page stops
    there: no model was picked), and which data and checkpoint it reads. Returns the Data page's data (the demo
    tweets until it has run) and the sidebar's picks. `what` names the page's messages (default `page`)."""
    what = what or page
    st.title(t(f"{page}.title"))
    st.caption(t(f"{what}.intro"))
    if show_other_prompt():
        st.stop()
    src, sel = data_source(), selection()
    st.caption(t(f"{what}.data", name=plain(src.title()), checkpoint=plain(sel.name)))
    return src, sel


def run_on_data(what: str, src: DataSource, key: Hashable, work: Callable[[Table, Progress], T], *,
                expected_s: float, draw_what_comes: Callable[[], None], disabled: bool = False) -> DataRun:
    """`work(table, progress)` on `src`'s table as the page's one job, for `key` (src.key(...)): the kept run when
    one ran for `key`; else the Run button, and once clicked the job (ui.run: queued, its place in line, progress,
    Stop), the CSV read inside the job. Bad input: one st.error line, and the page stops. Before a run (and
    while one waits its turn): `draw_what_comes()`, what the run will draw, and the page stops.
    `expected_s`: the queue's estimate until one has run; `disabled`: the button greyed (nothing to run)."""
    ss = st.session_state
    autostart = ss.pop(f"{what}_autostart", False)  # asked for this visit only, also when a run is kept
    kept = ss.get(f"{what}_result")
    if kept is not None and kept.key == key:
        return kept
    start = st.button(t(f"{what}.run"), key=f"{what}_run", type="primary", disabled=disabled) or autostart

    def on_table(progress: Progress):  # in a job slot (explorer/runtime/jobs.py): a class's runs wait in line
        table = read_csv(src.bytes, name=src.name)
        return work(table, progress), table

    done = run_or_stop(lambda: run(what, key, on_table, heavy=True, start=start, running=t(f"{what}.starting"),
                                   stop=t(f"{what}.stop"), expected_s=expected_s))
    if done is None:
        draw_what_comes()
        st.stop()
    ss[f"{what}_result"] = kept = DataRun(key, src.digest, *done)
    return kept


def check_data(what: str, key: Hashable, compute: Callable[[], T], *, running: str) -> T:
    """Quick work on the data, run at once and kept for `key` (memo; the Data page's checks): in a status line that
    says `running`, then how long it took. Bad input: one st.error line, and the page stops."""
    def checked() -> T:
        with st.status(running, expanded=False) as status:
            found, seconds = memo(what, key, lambda: timed(compute))
            status.update(label=t("data.checked", seconds=f"{seconds:.1f}"), state="complete")
        return found

    return run_or_stop(checked)  # the error line below the status, not inside it


def run_or_stop(compute: Callable[[], T]) -> T:
    """`compute()`; bad input (ExplorerError) is one st.error line, and the page stops."""
    try:
        return compute()
    except ExplorerError as err:
        show_error(err)
        st.stop()


def last_run(what: str, src: DataSource) -> DataRun | None:
    """`what`'s last run when it read this same data (its columns or options may differ), else None: the Dataset
    explanations page marks the Label audit's flagged rows."""
    kept = st.session_state.get(f"{what}_result")
    return kept if kept is not None and kept.digest == src.digest else None


def keep_found(what: str, found) -> None:
    """Keep `found`, a changed copy of `what`'s result, as that result (the next run reads it, not a new copy)."""
    import dataclasses

    ss = st.session_state
    ss[f"{what}_result"] = dataclasses.replace(ss[f"{what}_result"], found=found)


def open_row(values: Mapping[str, object], page: str | None = None) -> None:
    """Open a row of the data elsewhere; call it as a widget's callback, which runs before the script, so that the
    sidebar's text widget may still be changed: `values` go into session state (the row's `text`, `text_pair`, and
    what the page shows the row with), then `page` (none: the sidebar only) is opened by this run."""
    ss = st.session_state
    ss.update(values)
    if page:
        ss[OPEN] = page


def follow_open_row() -> None:
    """app.py, after the navigation is set and before a page is drawn: the page a row was opened on (open_row)."""
    page = st.session_state.pop(OPEN, None)
    if page:
        st.switch_page(page)


def picked_row(table_key: str, shown: list[int]) -> int | None:
    """The row of the data a single-row dataframe's selection (widget `table_key`) picked, where `shown` lists the
    data's row of each of its lines; None when nothing is picked."""
    picked = st.session_state[table_key].selection.rows
    return shown[picked[0]] if picked else None
