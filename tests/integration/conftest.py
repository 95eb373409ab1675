"""Integration-test fixtures: moto's Step Functions parser parses each ASL text once per session."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest


@pytest.fixture(scope="session", autouse=True)
def _asl_parsed_once_per_definition() -> Iterator[None]:
    """moto parses a state machine's definition with its ANTLR grammar (pure Python: 0.2-0.8 s for the run
    workflow's 30 kB here) when the state machine is created and again at every execution's start, and the
    tests create the same few definitions in every ``LocalAws`` and start hundreds of executions. The parse
    tree of a definition that parsed without error is kept; each call still builds fresh evaluation components
    from it with moto's own preprocessor (the program of an execution is never shared). A definition with an
    error is parsed, and refused, every time as before."""
    try:
        from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
        from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
    except ImportError:  # moto without the Step Functions parser: nothing to speed up
        yield
        return
    original = AmazonStateLanguageParser.parse
    trees: dict[str, Any] = {}
    lock = threading.Lock()

    def parse(definition: str) -> tuple[Any, Any]:
        with lock:
            tree = trees.get(definition)
        if tree is None:
            program, tree = original(definition)  # raises on a definition with an error: not kept
            with lock:
                trees[definition] = tree
            return program, tree
        return Preprocessor().visit(tree), tree

    with mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(parse)):
        yield
