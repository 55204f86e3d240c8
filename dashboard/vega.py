"""Vega, Vega-Lite and vega-embed as one JavaScript bundle to inline in the page, so it works offline.

The page may not fetch anything (no CDN: it is opened from disk on machines without internet, and this
project's machines reach PyPI but no npm). ``vl-convert-python`` (PyPI, BSD-3-Clause) ships the three
libraries and their dependencies inside its wheel, and ``vl_convert.javascript_bundle()`` returns them as
one self-contained script that defines ``vegaEmbed``, ``vega`` and ``vegaLite`` on ``window``.

Bundling takes about 10 s (vl-convert runs a JavaScript bundler); the result depends only on the
vl-convert and Vega-Lite versions, so it is kept in memory and in a file under the user's cache
directory (``$XDG_CACHE_HOME/offsetlake`` or ``~/.cache/offsetlake``), named after both versions.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from importlib import metadata

from conf.settings import user_cache_dir


@dataclass(frozen=True)
class VegaBundle:
    """The bundled script and the versions it holds (printed in the page's licence notice)."""

    script: str
    vega: str
    vega_lite: str
    vega_embed: str
    vl_convert: str

    @property
    def notice(self) -> str:
        return (f"Vega {self.vega}, Vega-Lite {self.vega_lite} and vega-embed {self.vega_embed} "
                "(BSD-3-Clause, Copyright (c) the University of Washington Interactive Data Lab; with their "
                "dependencies, among them d3 modules under the ISC licence, Copyright Mike Bostock), bundled by "
                f"vl-convert-python {self.vl_convert} (BSD-3-Clause, Copyright 2023 Jon Mease).")


def vega_lite_version() -> str:
    """The Vega-Lite minor version altair writes specs for (``v6.4.1`` -> ``6.4``)."""
    import altair as alt

    return ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])


@functools.cache
def vega_bundle() -> VegaBundle:
    import vl_convert as vlc

    vl_version = vega_lite_version()
    if vl_version not in vlc.get_vegalite_versions():
        raise RuntimeError(f"vl-convert-python {metadata.version('vl-convert-python')} has no Vega-Lite {vl_version} "
                           f"(it has {', '.join(vlc.get_vegalite_versions())}), which altair's specs need: "
                           "pin a vl-convert-python release that ships it in requirements.lock")
    version = metadata.version("vl-convert-python")
    cached = user_cache_dir() / f"vega-bundle-vlc{version}-vl{vl_version}.js"
    try:
        script = cached.read_text(encoding="utf-8")
    except OSError:
        script = vlc.javascript_bundle(snippet=None, vl_version=vl_version)  # type: ignore[arg-type]  # None: its default snippet
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(script, encoding="utf-8")
            partial.replace(cached)
        except OSError:
            pass  # a read-only home only costs the next run the 10 s again
    return VegaBundle(script=script, vega=vlc.get_vega_version(), vega_lite=vl_version,
                      vega_embed=vlc.get_vega_embed_version(), vl_convert=version)
