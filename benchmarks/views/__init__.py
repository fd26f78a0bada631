"""Pages of the benchmarks app: the catalog, campaigns and their results."""
