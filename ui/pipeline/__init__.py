"""The application pipeline: the demo (:mod:`.demo`), its resumable steps (:mod:`.steps`), the
report (:mod:`.report`) and the one definition of a runs folder's layout (:mod:`.layout`)."""
