"""The documentation site (MkDocs): hand-written pages beside the reference pages ``generate`` writes."""
