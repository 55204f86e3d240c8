"""The examples in the decoders' docstrings are executed, so the documentation cannot rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import decoders

MODULES = ["decoders"] + [f"decoders.{m.name}" for m in pkgutil.iter_modules(decoders.__path__)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
