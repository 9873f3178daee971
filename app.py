"""Head Explorer: entry point. The sidebar picks live here so they persist across pages."""
# Serve with `head-explorer app` or `streamlit run serve.py`, not `streamlit run app.py` (README: Sharing the app).
import sys

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

# Under a plain `streamlit run app.py` (neither explorer.cli.SERVE nor serve.py cleared it first), this run
# went through Streamlit's legacy pages/ resolution, which answers a deep link with "Page not found"
# (streamlit#9624) and has already told this first visitor so; Streamlit 1.67 has no hook that runs before
# the first request. Cleared now, before torch loads, so the sessions that start meanwhile skip it.
PagesManager.uses_pages_directory = False

from explorer.text import i18n  # noqa: E402 light: no torch, so the notice below shows first

st.set_page_config(page_title="Head Explorer", page_icon="🧠", layout="wide",
                   initial_sidebar_state="collapsed" if st.session_state.get("presenter") else "auto")
# A cold start: torch and transformers take seconds to import. Until st.navigation below has named
# the pages, the sidebar would list the pages/ folder's raw file names: hide it, say what is happening.
booting = "torch" not in sys.modules
if booting:
    boot = st.empty()
    with boot.container():
        st.markdown("<style>[data-testid=stSidebarNav] {display: none;}</style>", unsafe_allow_html=True)
        st.info(i18n.t("app.starting", st.session_state.get("lang", "en")), icon=":material/hourglass_top:")

from explorer import ui  # noqa: E402
from explorer.model import checkpoints, heads  # noqa: E402
from explorer.model.analysis import MAX_TEXT_CHARS  # noqa: E402
from explorer.plots.common import PRESENTER_FONT, PRESENTER_TITLE  # noqa: E402
from explorer.runtime.session_models import freeze_long_lived  # noqa: E402
from explorer.ui import t  # noqa: E402

ui.boot()  # once per process (later runs skip it): torch's threads, the server's reporter, the widget gate

if booting:
    # Streamlit runs a full gc.collect() after every script run. Over the half million objects that
    # torch, transformers and the rest bring, that took 0.3-0.7 s per rerun, holding the GIL so every
    # other session waited. Those objects live as long as the process: leave them out of collections
    # (again after each model load and each server report: explorer/ui/cache.py, explorer/ui/report.py).
    freeze_long_lived()


ss = st.session_state
# Plotly draws text as SVG with inline sizes, which !important rules override; tables are HTML (pages
# draw ui.draw_table, which is an HTML table in presenter view: the data grid is a canvas).
# Charts drawn through ui.draw_chart are laid out at these sizes too (plots.common.presenter), so nothing overlaps.
PRESENTER_CSS = """
html, .stMarkdown p, .stMarkdown li, .stCaption, [data-testid=stWidgetLabel] p, .stAlert p {font-size: 1.35rem !important;}
[data-testid=stSidebar] .stCaption, [data-testid=stSidebar] .stMarkdown p {font-size: 1rem !important;}
[data-testid=stMetricValue] {font-size: 2.6rem !important;}
[data-testid=stTable] td, [data-testid=stTable] th {font-size: 1.3rem !important;}
.stButton button p, .stDownloadButton button p, [data-testid=stPageLink] p {font-size: 1.35rem !important;}
.stButton button, .stDownloadButton button {padding: 0.5rem 1.2rem !important;}
[data-testid=stCode] pre, [data-testid=stCode] code {white-space: pre-wrap !important; overflow-wrap: anywhere;
  font-size: 1.15rem !important;}
h3[id^=lesson-step] {scroll-margin-top: 4.5rem;}
.stPlotlyChart text {font-size: %dpx !important;}
.stPlotlyChart .gtitle {font-size: %dpx !important;}
""" % (PRESENTER_FONT, PRESENTER_TITLE)
SCROLL_TOP = """<script>setTimeout(() => document.querySelectorAll("[data-testid=stMain], [data-testid=stAppViewContainer]")
  .forEach(e => e.scrollTo(0, 0)), 60)</script>"""
link = ui.read_shared_link()  # read on every run, which takes the gate's note of a dropped query every run
if "_link_notes" not in ss:  # a session's first run: what the link it came by asks for (teach.links)
    ss.update(link.as_dict())
    ss["_link_notes"] = link.notes
ui.set_sidebar_defaults()  # where the link and the session gave none


def _sidebar() -> None:
    with st.sidebar:
        st.selectbox(t("app.language"), list(i18n.LANGUAGES), format_func=i18n.LANGUAGES.get,
                     **ui.sticky("lang", options=i18n.LANGUAGES))
        choices = list(checkpoints.REGISTRY) + ui.session_checkpoint_names() + [ui.OTHER]
        if ss["checkpoint"] not in choices:  # e.g. a session model is gone
            ss["checkpoint"] = checkpoints.DEFAULT_CHECKPOINT
        st.selectbox(t("app.checkpoint"), choices, help=t("app.checkpoint_help"), **ui.sticky("checkpoint"),
                     format_func=lambda n, lang=ss["lang"]: f"{n}: {i18n.t('app.registry.' + n, lang)}"
                     if n in checkpoints.REGISTRY else i18n.t("app.other", lang) if n == ui.OTHER else n)  # lang bound now: AppTest formats outside the run
        if ss["checkpoint"] == ui.OTHER:
            st.text_input(t("app.other_checkpoint"), placeholder="models/my-checkpoint",
                          **ui.sticky("checkpoint_other"))
        st.selectbox(t("app.head"), heads.KINDS, help=t("app.head_help"),
                     **ui.sticky("head", options=heads.KINDS))
        st.text_area(t("app.text"), height=110, max_chars=MAX_TEXT_CHARS, **ui.sticky("text"))
        if ss["lang"] != "en":  # the example stays English: the built-in models only read English
            st.caption(t("app.text_english"))
        st.text_area(t("arch.text_b"), height=68, help=t("arch.text_b_help"), placeholder=t("arch.text_b_placeholder"),
                     max_chars=MAX_TEXT_CHARS, **ui.sticky("text_pair"))
        st.number_input(t("app.seed"), min_value=0, max_value=2**31 - 1, step=1, **ui.sticky("seed"))
        st.toggle(t("app.presenter"), help=t("app.presenter_help"), on_change=_presenter_changed,
                  **ui.sticky("presenter"))
        ui.keep_class_links()  # a class's language and lock stay in the address: a reload or a new tab keeps them


def _presenter_changed() -> None:
    if ss["presenter"]:  # turned on: the lesson starts at step 1, the page at its top
        ss["lesson_step"] = 0
        ss["_presenter_top"] = True


# Every sticky widget (sidebar and pages) keeps its value: before any widget is drawn.
ui.keep_widgets()
ui.show_refused()  # a value sent past a widget's limits was not taken: one line each
# Like the pages: a failure here is one translated line (and a server log entry), never a traceback.
ui.run_guarded(_sidebar)


def _presenter_off() -> None:
    ss["presenter"] = False


if ss.get("presenter"):  # larger type for the back of the classroom: text, tables and chart text
    st.markdown(f"<style>{PRESENTER_CSS}</style>", unsafe_allow_html=True)
    if ss.pop("_presenter_top", False):  # drawn once per turning on: a new element, whose script runs
        st.html(SCROLL_TOP, unsafe_allow_javascript=True)
    # The sidebar starts collapsed here, hiding its toggle: a way out on the page itself.
    st.button(t("app.presenter_off"), key="presenter_exit", on_click=_presenter_off, icon=":material/close_fullscreen:")

# url_path must differ from the file's stem: with a pages/ folder beside app.py, Streamlit's legacy
# multipage mode (a server's first runs, see the top; every AppTest run, which re-arms it) hashes pages
# by that stem, and a clash makes reruns execute the page without app.py, dropping the sidebar and its state.
PAGES = [
    ("pages/home.py", "home", "pipeline", "🔗", True),
    ("pages/tokens.py", "tokens", "attention", "🔤", False),
    ("pages/pooled.py", "pooled", "pooled-vector", "🧮", False),
    ("pages/dropout.py", "dropout", "dropout-effect", "🎲", False),
    ("pages/logits.py", "logits", "probabilities", "📊", False),
    ("pages/compare.py", "compare", "compare-heads", "⚖️", False),
    ("pages/attributions.py", "attributions", "attribution", "🔍", False),
    ("pages/encoder.py", "encoder", "inside-encoder", "🔬", False),
    ("pages/whatif.py", "whatif", "what-if", "🔀", False),
    ("pages/data.py", "data", "labels", "🗂️", False),
    ("pages/audit.py", "audit", "label-audit", "🩺", False),
    ("pages/explain_data.py", "explain_data", "dataset-explanations", "🧭", False),
    ("pages/scan.py", "scan", "scan-report", "🩻", False),
    ("pages/finetune.py", "finetune", "fine-tune", "🏋️", False),
    ("pages/lesson.py", "lesson", "guided-lesson", "🎓", False),
    ("pages/quiz.py", "quiz", "review-quiz", "❓", False),
]
nav = st.navigation([
    st.Page(path, title=t(f"{key}.title"), icon=icon, url_path=slug, default=default)
    for path, key, slug, icon, default in PAGES
], expanded=True)  # past twelve pages Streamlit would hide some behind "View more"; a class needs them all
if booting:
    boot.empty()  # the navigation now has its titles
ui.follow_open_row()  # a row clicked on a data page opens on the page that shows it, before that page draws
ui.show_evictions()  # a fine-tuned model dropped to stay within the memory bounds
ui.show_link_notes(ss.pop("_link_notes", None) or ())  # shown once, on the page the link opened
ss["_link_notes"] = ()
ui.run_guarded(nav.run)  # one translated line for any unexpected error, never a traceback
