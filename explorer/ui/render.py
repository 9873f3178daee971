"""Drawing on a page: user text kept literal, errors as one translated line, tables, charts, column headers."""
from __future__ import annotations

import json
from typing import Callable, Iterable

import numpy as np
import streamlit as st

from explorer.model.heads import POOLING
from explorer.plots.common import presenter
from explorer.model.problem import Prediction, prediction_text
from explorer.teach import links
from explorer.text.errors import ExplorerError
from explorer.ui import gate
from explorer.text.plain import markdown as plain  # user text in Markdown: the one rule, in explorer.text.plain
from explorer.ui.session import MODELS, lang, log, owner, t


def prediction(pred: Prediction) -> str:
    """A prediction as the views show it, "none" translated (a multi-label prediction of no label)."""
    return prediction_text(pred, none=t("pipeline.none"))


def show_error(err: BaseException | str) -> None:
    """One st.error line: a core error in the session's language, user data kept literal. Any other
    exception (e.g. from a background thread) is logged and shown as the translated "unexpected" line."""
    if isinstance(err, ExplorerError):
        text = err.message(lang())
    elif isinstance(err, str):
        text = err
    else:
        log.error("unexpected error", exc_info=err)
        text = t("errors.unexpected", kind=type(err).__name__)
    st.error(plain(text.strip().splitlines()[0] if text.strip() else type(err).__name__))


def run_guarded(run: Callable[[], object]) -> None:
    """Run a page (or a fragment). Bad input that escaped the page shows as its one line; anything else
    as one translated line, the traceback going only to the server log. st.rerun, st.stop and
    st.switch_page raise BaseExceptions (Streamlit's ScriptControlException), which pass through."""
    try:
        run()
    except ExplorerError as err:
        show_error(err)
    except Exception as err:  # noqa: BLE001 - the page boundary: visitors never see a traceback
        log.exception("unexpected error while running a page")
        st.error(t("errors.unexpected", kind=type(err).__name__))


def draw_table(rows: list[dict], **grid) -> None:
    """A data table: the interactive grid, or in presenter view an HTML table, which takes the larger
    type (the grid is drawn on a canvas that CSS cannot enlarge). User strings stay literal."""
    if st.session_state.get("presenter"):
        def cell(v):  # ✓ for a flag (no English true/false), blank for none, user text literal
            if isinstance(v, (bool, np.bool_)):
                return "✓" if v else ""
            return "" if v is None else plain(v) if isinstance(v, str) else v
        st.table([{k: cell(v) for k, v in row.items()} for row in rows], hide_index=True)
    else:
        st.dataframe(rows, hide_index=True, **grid)


def draw_chart(fig, key: str, where=None, height: int | None = None, *, title_chars: int | None = None) -> None:
    """st.plotly_chart (in `where`, a column or container), laid out for presenter view when it is on:
    larger type that the figure itself makes room for, not only CSS, no taller than `height` px (default:
    the room a projector leaves, see plots.common.presenter), its title wrapped at `title_chars` (default: what
    half a projector's window holds)."""
    if st.session_state.get("presenter"):
        fig = presenter(fig, height, **({"title_chars": title_chars} if title_chars else {}))
    (where or st).plotly_chart(fig, key=key)


def draw_example(fig, key: str) -> None:
    """A page's picture of what it will draw (plots.examples), in a frame that says the numbers are an example."""
    with st.container(border=True):
        st.caption(t("example.note"))
        draw_chart(fig, key)


def headers(rows: list[dict], prefix: str) -> list[dict]:
    """Table rows from the core with their column names translated (`prefix` + column name)."""
    return [{t(prefix + k): v for k, v in row.items()} for row in rows]


STEP_KEYS = POOLING  # the pooling steps: app.step_first | _last | _mean


def step_label(name: str) -> str:
    """A head step's name as shown: the pooling steps are words, the others module names."""
    return t(f"app.step_{STEP_KEYS[name]}") if name in STEP_KEYS else name


def show_evictions() -> None:
    """Say which of this session's models were evicted to stay within the memory bounds."""
    for name, why in MODELS.take_evicted(owner()):
        st.info(t(f"safety.evicted_{why}", name=plain(name), n=MODELS.per_owner, mb=MODELS.budget_bytes // 2**20))


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def show_refused() -> None:
    """One line per widget value the server refused for this session (explorer/ui/gate.py)."""
    sid = _session_id()
    for r in gate.take(sid) if sid is not None else ():
        st.error(plain(t(f"errors.{r.reason}", widget=r.key, **dict(r.fields))))


def read_shared_link() -> links.Link:
    """What the link this session came by asks for (explorer/teach/links.py), with a note where the server
    dropped its query string for its size (the gate saw it; st.query_params is then empty)."""
    sid = _session_id()
    dropped = gate.take_dropped_query(sid) if sid is not None else None
    return links.read_link({k: st.query_params[k] for k in st.query_params}, dropped)


# The sidebar's page links and the pages' own (st.page_link) carry the class's query too, for a link opened in a
# new tab or copied: Streamlit draws their addresses bare and has no option for it. A click on one is Streamlit's
# own navigation, which drops the query; keep_class_links writes it back on the new page's run. Watched, because
# Streamlit draws links anew on every page; an address is changed only when it differs, so the watch settles.
CLASS_LINKS = """<script>(() => { window.__classQuery = {QUERY};
  const fix = () => {
    for (const a of document.querySelectorAll('[data-testid=stSidebarNav] a, [data-testid=stPageLink] a')) {
      const u = new URL(a.getAttribute('href') || '', location.href);
      if (u.origin !== location.origin) continue;
      for (const k of {KEYS}) {
        const v = window.__classQuery[k];
        v === undefined ? u.searchParams.delete(k) : u.searchParams.set(k, v);
      }
      if (u.href !== a.href) a.setAttribute('href', u.href);
    } };
  if (!window.__classLinks) {
    window.__classLinks = new MutationObserver(fix);
    window.__classLinks.observe(document.body, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ['href']});
  }
  fix(); })()</script>"""


def keep_class_links() -> None:
    """The class's language and quiz lock (teach.links.class_query) in the address bar, written after every page
    switch (Streamlit's navigation drops the query) and taken out when no longer set, so a reload keeps them; and
    in every page link's address (CLASS_LINKS, a script drawn at the sidebar's end; its values are class_query's
    own, a language code and "1", never a link's text)."""
    ss = st.session_state
    want = links.class_query(lang() if ss.get("lang_from_link") else None, bool(ss.get("quiz_lock")))
    query = st.query_params
    for key in links.CLASS_PARAMETERS:
        if key in want and query.get(key) != want[key]:
            query[key] = want[key]
        elif key not in want and key in query:
            del query[key]
    script = CLASS_LINKS.replace("{QUERY}", json.dumps(want)).replace("{KEYS}", json.dumps(links.CLASS_PARAMETERS))
    st.sidebar.html(script, unsafe_allow_javascript=True)


def show_link_notes(notes: Iterable[links.LinkNote]) -> None:
    """A shared link's notes, each one line of plain text: their values come from the link, which anyone can
    write and forward, so none of it may become a live link, an image that fetches, or HTML."""
    for note in notes:
        st.info(plain(t(note.key, **note.kwargs())), icon=":material/link:")
