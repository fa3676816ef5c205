"""tsm_apps.data: video loading, TSN sampling, transforms and the synthetic data sets."""
