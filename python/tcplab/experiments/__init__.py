"""Running many scenarios: sweep expansion, executors (local pool, Dask), the result store
and the statistics of repetitions."""
