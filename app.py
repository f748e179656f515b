"""Tokens on the Sphere — entry point: ``streamlit run app.py`` (or ``make run``)."""
import streamlit as st

from sim.warm import warm
from ui.nav import navigation
from ui.page import language_selector

st.set_page_config(page_title="Tokens on the Sphere", page_icon=":material/blur_circular:",
                   layout="wide")
st.cache_resource(show_spinner=False)(warm)()  # compile/load every Numba kernel once per process
lang = language_selector()
st.navigation(navigation(lang), position="sidebar").run()
