"""tests/integration/conftest.py keeps the parse tree of each ASL text moto parsed without error; every
execution still gets evaluation components of its own, and a definition with an error is refused each time."""

from __future__ import annotations

import json

import pytest
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser, ASLParserException

DEFINITION = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "Result": {"n": 1}, "End": True}}})


def test_a_definition_is_parsed_once_and_each_call_gets_its_own_program():
    first_program, first_tree = AmazonStateLanguageParser.parse(DEFINITION)
    second_program, second_tree = AmazonStateLanguageParser.parse(DEFINITION)
    assert second_tree is first_tree  # the kept parse tree
    assert second_program is not first_program  # fresh components: no state shared between executions
    assert type(second_program) is type(first_program)
    assert [type(s) for s in second_program.states.states.values()] == [
        type(s) for s in first_program.states.states.values()]


def test_a_definition_with_an_error_is_refused_every_time():
    broken = DEFINITION.replace('"Type": "Pass"', '"Type": "Passs"')
    for _ in range(2):
        with pytest.raises(ASLParserException):
            AmazonStateLanguageParser.parse(broken)
