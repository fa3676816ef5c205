"""The Streamlit app (``tsm ui``): :mod:`.main` is the script Streamlit runs; one module per view."""
