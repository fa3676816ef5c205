"""The runs folder the demo writes and everything that reads it (the report, the app):

* :mod:`.layout`: where each file lies (:class:`RunLayout`), defined once;
* :mod:`.seeds`: the TSM-vs-TSN comparisons over the training seeds (:class:`Spread`);
* :mod:`.spread`: how those comparisons are shown (table rows, a Plotly figure, a note);
* :mod:`.intervals`: each comparison's paired-bootstrap interval over the test items, computed
  with the report into ``intervals.json`` (which :mod:`.seeds` reads).

The demo pipeline (:mod:`ui.pipeline`) writes the folder; the app (:mod:`ui.app`) reads it
through its sources and never imports the pipeline.
"""
