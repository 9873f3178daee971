"""Head Explorer: entry point. The sidebar picks live here so they persist across pages."""
import streamlit as st

from explorer import checkpoints, heads, i18n, state
from explorer.state import t

st.set_page_config(page_title="Head Explorer", page_icon="🧠", layout="wide")

ss = st.session_state
ss.setdefault("lang", "en")
ss.setdefault("checkpoint", checkpoints.DEFAULT_CHECKPOINT)
ss.setdefault("head", "own")
ss.setdefault("text", i18n.t("app.text_default", "en"))
ss.setdefault("seed", 0)

with st.sidebar:
    st.selectbox(t("app.language"), list(i18n.LANGUAGES), format_func=i18n.LANGUAGES.get, key="lang")
    choices = list(checkpoints.REGISTRY) + state.session_checkpoint_names() + [state.OTHER]
    if ss["checkpoint"] not in choices:
        ss["checkpoint"] = checkpoints.DEFAULT_CHECKPOINT
    st.selectbox(t("app.checkpoint"), choices, key="checkpoint", help=t("app.checkpoint_help"),
                 format_func=lambda n: f"{n}: {checkpoints.REGISTRY[n]}" if n in checkpoints.REGISTRY else n)
    if ss["checkpoint"] == state.OTHER:
        st.text_input(t("app.other_checkpoint"), key="checkpoint_other", placeholder="models/my-checkpoint")
    st.selectbox(t("app.head"), heads.KINDS, key="head", help=t("app.head_help"))
    st.text_area(t("app.text"), key="text", height=110)
    st.number_input(t("app.seed"), min_value=0, max_value=2**31 - 1, step=1, key="seed")

PAGES = [
    ("pages/home.py", "home", "🔗", True),
    ("pages/tokens.py", "tokens", "🔤", False),
    ("pages/pooled.py", "pooled", "🧮", False),
    ("pages/dropout.py", "dropout", "🎲", False),
    ("pages/logits.py", "logits", "📊", False),
    ("pages/compare.py", "compare", "⚖️", False),
    ("pages/attributions.py", "attributions", "🔍", False),
    ("pages/data.py", "data", "🗂️", False),
    ("pages/finetune.py", "finetune", "🏋️", False),
    ("pages/lesson.py", "lesson", "🎓", False),
    ("pages/quiz.py", "quiz", "❓", False),
]
nav = st.navigation([
    st.Page(path, title=t(f"nav.{key}"), icon=icon, url_path=key, default=default)
    for path, key, icon, default in PAGES
])
# The Explore pages' widgets keep their values when the user visits another page.
state.persist(("tokens_", "pooled_", "dropout_", "logits_", "compare_"))
nav.run()
