"""Set before any test runs: MKL's strict reproducible mode, which the live engine's exact
batching needs and which MKL reads only when it starts (tsm_apps.live.exact)."""

from tsm_apps.live.exact import request_strict_mkl

request_strict_mkl()
