"""The pieces the pages are drawn with: the player and the live stream, tables and charts, frame
drawing, the video and checkpoint pickers, the comparison of any two checkpoints, the
detectors' panels, the flow panel, the runs folder's seed spreads."""
