"""Spark and Delta at the edges: everything here needs a SparkSession."""
