"""The application layer: the Streamlit app (:mod:`ui.app`), the demo pipeline and report
(:mod:`ui.pipeline`) and ``tsm ui`` (:mod:`ui.cli`). Imports detection and dissect; nothing
imports it."""
