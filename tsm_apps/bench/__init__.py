"""``tsm bench``: the suite's performance figures (:mod:`.cli`), the core figures of
``tsm_apps`` (:mod:`.core`), the DDP figure (:mod:`.ddp`) and side-by-side timing
(:mod:`.timing`). Other packages add figures through the ``tsm.bench`` entry-point group."""
