"""``offsetlake dashboard``: a self-contained HTML page of the warehouse's consumer groups.

``read.py`` reads the gold tables (delta-rs, Spark as the fallback), ``data.py`` turns rows into what
the charts show (pure functions), ``render.py`` writes the page's Vega-Lite charts with altair,
``vega.py`` supplies the Vega JavaScript to inline (so the page works offline), and ``build.py`` ties
them together.
"""
