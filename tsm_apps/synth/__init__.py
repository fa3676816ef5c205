"""Synthetic data sets the suite generates (``tsm synth``): the temporal-reasoning set
(:mod:`.temporal`) and a small ImageNet-VID in the real layout (:mod:`.vid`)."""
