"""The ``offsetlake`` command: one thin module per subcommand, library code does the work."""
