"""tsm_apps.evaluation: what ``tsm test`` does -- each checkpoint's test protocol, multi-clip /
multi-crop scoring, metrics, two-stream fusion and online (early) recognition. Training imports
it (validation uses the same protocol); it never imports training."""
