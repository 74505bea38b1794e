"""Speed benchmarks: parsing, views, passes, memory, comparison, TF, the browser, load."""
