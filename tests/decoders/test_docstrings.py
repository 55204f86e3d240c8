"""The examples in the decoders' docstrings are executed, so the documentation cannot rot.

Only modules that carry examples are listed, and each must still carry at least one: a module whose
examples were deleted fails here instead of passing with nothing run.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

DOCUMENTED = [
    "decoders",
    "decoders.consumer_protocol",
    "decoders.errors",
    "decoders.json_lines",
    "decoders.layout",
    "decoders.partitioning",
    "decoders.records",
    "decoders.wire",
]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no docstring example left"
    assert result.failed == 0
