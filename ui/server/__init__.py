"""The server: start-up (``python -m ui.server``), per-client budgets, the sign-in routes, runs that
take turns, shared heavy jobs, and the adapters to Streamlit's internals."""
