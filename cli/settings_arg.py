"""Load settings for a subcommand from the global ``--config`` option."""

from __future__ import annotations

import argparse

from conf.settings import Settings, load_settings


def settings_from(args: argparse.Namespace) -> Settings:
    return load_settings(getattr(args, "config", None))
