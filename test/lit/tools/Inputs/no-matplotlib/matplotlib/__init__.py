# Stands in for a machine without matplotlib (bench-plot.test puts this folder first on
# PYTHONPATH): importing it fails as a missing package would.
raise ImportError("No module named 'matplotlib' (the stand-in of bench-plot.test)")
