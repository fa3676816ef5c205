"""The app's pages, one module each (Detection, Attention, Live, Runs): each draws its page
from the widgets (:mod:`ui.app.widgets`) and the records of :mod:`ui.app.sources`; a page never
imports another page."""
