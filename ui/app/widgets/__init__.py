"""The pieces the pages are drawn with: the player and the live stream, tables and charts, frame
drawing, the video and checkpoint pickers, the detectors' panels, the flow panel, the runs
folder's seed spreads. A page (a ``render(settings)``) lives in :mod:`ui.app.views`, never here."""
