"""JVM artifacts offsetlake needs at run time, resolved from Maven Central at set-up."""
