"""Data-quality suites over the warehouse's tables, kept as code beside the tables they check.

One module per checked table or concern (``offset_commits``, ``partition_assignments``, ...), each
declaring a :class:`quality.suite.Suite` of named rules with a severity and a reason.
``quality.checkpoint.run_checks`` runs them with Great Expectations over the Spark tables, records
every result in ``audit.data_quality_results`` and builds GX data docs; ``offsetlake check`` is
its command.
"""
