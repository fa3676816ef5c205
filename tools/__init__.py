"""Tools of the checkout, not installed with the product: the test and benchmark harness
(sample clips, random-weight models) and maintenance scripts. Imported from the repository root
(``python -m pytest``, ``python -m benchmarks.<name>``)."""
