"""Placeholder: filled in by its issue."""
import streamlit as st

from explorer.state import t

st.title(t("nav.lesson"))
st.info("This page is being built.")
