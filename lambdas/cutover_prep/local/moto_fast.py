"""Costs of moto the local harness pays once per warm-up unit, cut without changing what moto answers (issue 33 §3,
issue 34; ``benchmarks/harness_overhead.py`` measured them: the harness was half of a local warm-up's wall time;
tests/unit/test_harness_expressions.py: the same answers, items and errors with and without them).

- moto's DynamoDB ``Validator`` deep-copies the parsed update expression it validates (``copy.deepcopy``: its memo,
  ``__reduce_ex__`` and ``_reconstruct`` for every node), once or twice per UpdateItem; each chunk a unit reads is
  committed in a transaction of two updates. A third of the commit's samples (py-spy). ``_copy_tree`` copies the
  same tree (moto's AST nodes hold only ``type``, ``children`` and ``parent``) node by node: the copy is a tree of
  the same classes and values, its parents pointing into the copy, the values in it (a DynamoType, a list) deep
  copies as before.
- moto's Step Functions interpreter parses every JSONPath it evaluates anew (``jsonpath_ng.ext.parse``, whose
  parser is built for each call): one per InputPath, ResultPath, Parameters entry of every state of every unit.
  The parsed path is only read (``find``): parsed once per text (``functools.lru_cache``).
- moto's UpdateItem (issue 34: a 113-unit local run, 872 UpdateItems = 14.6 s, 376 transactions = 15 s; cProfile of
  the unit commit's UpdateItem: parse 4.6 s, ``Validator.validate`` 10.8 s of 19.8 s):
  - ``_parsed_once``: the same UpdateExpression text was parsed twice per call (the JSON handler's check of the
    names and values it uses, then the backend) and again at every call. Parsed once per text; the tree is only
    read (``find_clauses``) or copied (the Validator's copy above, which every processor works on).
  - ``_whole_tree_checks_once``: the Validator's first two processors, ``ActionCountValidator`` (two SET clauses...)
    and ``OverlappingPathsValidator`` (duplicate or overlapping paths), look at the whole subtree of every node
    that is an ``UpdateExpression`` (``find_clauses`` at each: O(n^2)); what they answer depends on the parsed tree
    and ``ExpressionAttributeNames`` only. Once they have passed on a tree with those names, they are not run
    again on it; an expression that fails them fails them every time (never remembered).
  - ``_traversing_by_type``: each processor looked its node classes up again at every node (``_processing_map()``
    builds a dict of bound methods, then ``isinstance`` against ABCs); looked up once per traversal and node class,
    the same first match in the same order (``DepthFirstTraverser.process``).
  - ``_sizes_without_copies``: every attribute an update sets checks the item's 400 KB (``LimitedSizeDict``: the
    size of the whole item again), and ``DynamoType.size`` of a map rebuilt each member (``DynamoType(v)``, which
    rebuilds its lists and maps in turn) to ask its size: the run item (the plan's summary) and a unit's (its
    chunks) at every commit. The same sizes, counted without building anything.
"""

from __future__ import annotations

import copy
import functools
from typing import Any
from unittest import mock

_NODE_FIELDS = frozenset(("type", "children", "parent"))
_ATOMS = (str, int, float, bool, type(None))  # what copy.deepcopy returns as it is


def _copy_tree(node: Any, memo: dict[int, Any] | None = None, _node: type | None = None) -> Any:
    """A copy of moto's expression tree, as ``copy.deepcopy`` makes it, faster. A node with other fields than moto's
    three (a future moto's) is deep-copied as before."""
    if _node is None:
        from moto.dynamodb.parsing.ast_nodes import Node as _node
    memo = {} if memo is None else memo
    if not isinstance(node, _node) or not _NODE_FIELDS.issuperset(node.__dict__):
        return copy.deepcopy(node, memo)
    new = object.__new__(type(node))
    memo[id(node)] = new
    children = node.children
    if children is not None:
        copied = []
        for child in children:
            if isinstance(child, _ATOMS):
                copied.append(child)
            elif isinstance(child, _node):
                child = _copy_tree(child, memo, _node)
                child.parent = new
                copied.append(child)
            else:
                copied.append(copy.deepcopy(child, memo))
        children = copied
    parent = node.parent
    new.__dict__.update(type=node.type, children=children,
                        parent=None if parent is None else memo.get(id(parent)) or copy.deepcopy(parent, memo))
    return new


def patches() -> list[Any]:
    """The patches (``mock.patch`` objects, not started) the harness starts with the others."""
    import jsonpath_ng.ext
    from moto.dynamodb.parsing import validators
    from moto.stepfunctions.parser.asl.utils import json_path

    original_init = validators.Validator.__init__

    def init(self: Any, expression: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, None, *args, **kwargs)  # the constructor's only use of the tree is its deep copy
        self.node_to_validate = _copy_tree(expression)
        self._whole_tree_key = _whole_tree_key(self, expression, self.expression_attribute_names)

    return [mock.patch.object(validators.Validator, "__init__", init),
            mock.patch.object(json_path, "parse", functools.lru_cache(maxsize=4096)(jsonpath_ng.ext.parse)),
            _parsed_once(), _whole_tree_checks_once(), _traversing_by_type(), _sizes_without_copies()]


_TREES: dict[str, Any] = {}  # UpdateExpression text -> moto's parsed tree (never handed out to be changed)
_PASSED: set[tuple[Any, ...]] = set()  # (validator class, tree, names) whose whole-tree checks passed
_TREES_BY_ID: dict[int, Any] = {}  # id(tree) -> tree, for the trees in _TREES
_MAX_TREES = 1024


def _parsed_once() -> Any:
    """``UpdateExpressionParser.make`` once per expression text. A text that does not parse raises, as before, each
    time (nothing is kept for it)."""
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    original = UpdateExpressionParser.make.__func__

    def make(cls: type, expression_str: Any) -> Any:
        if cls is not UpdateExpressionParser or not isinstance(expression_str, str):
            return original(cls, expression_str)
        tree = _TREES.get(expression_str)
        if tree is None:
            tree = original(cls, expression_str)
            if len(_TREES) >= _MAX_TREES:
                _TREES.clear()
                _TREES_BY_ID.clear()
                _PASSED.clear()
            _TREES[expression_str] = _TREES_BY_ID[id(tree)] = tree
        return tree

    return mock.patch.object(UpdateExpressionParser, "make", classmethod(make))


def _whole_tree_checks_once() -> Any:
    """The Validator skips ``ActionCountValidator`` and ``OverlappingPathsValidator`` (its first two processors, which
    only read the tree) on a parsed tree and ``ExpressionAttributeNames`` they have passed on before (the key
    ``__init__`` gives it, ``_whole_tree_key``). Any other order of processors (a future moto's) runs them all."""
    from moto.dynamodb.parsing import validators

    whole_tree = (validators.ActionCountValidator, validators.OverlappingPathsValidator)
    original = validators.Validator.validate

    def validate(self: Any) -> Any:
        processors = self.processors
        key = getattr(self, "_whole_tree_key", None)
        if key is None or tuple(type(p) for p in processors[:2]) != whole_tree:
            return original(self)
        skip = key in _PASSED
        n = self.node_to_validate
        for i, processor in enumerate(processors):
            if i < 2 and skip:
                continue
            n = processor.traverse(n)
            if i == 1:
                _PASSED.add(key)
        return n

    return mock.patch.object(validators.Validator, "validate", validate)


def _whole_tree_key(validator: Any, expression: Any, names: Any) -> tuple[Any, ...] | None:
    """What the whole-tree checks' answer depends on: the validator's class, the parsed tree (one of ``_TREES``, held
    by the key: a tree hashes by its identity) and the names (None, or a dict of texts); None when it is not that."""
    if _TREES_BY_ID.get(id(expression)) is not expression:
        return None
    if names is None:
        return (type(validator), expression, None)
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        return None
    return (type(validator), expression, frozenset(names.items()))

def _traversing_by_type() -> Any:
    """``DepthFirstTraverser.traverse`` as moto's (children first, left to right, ``pre_processing_of_child`` before
    each, the processed node put in its parent's place with the same parent), with the processor of each node class
    found once per traversal: the first entry of ``_processing_map()`` (in its order) the node is an instance of."""
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node

    def traverse(self: Any, root: Any) -> Any:
        mapping = self._processing_map()
        classes = tuple(mapping)
        found: dict[type, Any] = {}

        def processor_of(node: Any) -> Any:
            kind = type(node)
            try:
                return found[kind]
            except KeyError:
                pass
            chosen = None
            if isinstance(node, classes):
                chosen = next((fn for cls, fn in mapping.items() if isinstance(node, cls)), _NO_PROCESSOR)
            found[kind] = chosen
            return chosen

        def visit(node: Any, child_id: int = -1) -> Any:
            if isinstance(node, Node):
                parent_node = node.parent
                if node.children is not None:
                    for i, child_node in enumerate(node.children):
                        self.pre_processing_of_child(node, i)
                        visit(child_node, i)
                fn = processor_of(node)
                if fn is not None:
                    node = None if fn is _NO_PROCESSOR else fn(node)
                    node.parent = parent_node
                    if parent_node:
                        parent_node.children[child_id] = node
            return node

        return visit(root)

    return mock.patch.object(DepthFirstTraverser, "traverse", traverse)


def _NO_PROCESSOR(node: Any) -> Any:  # noqa: N802 - a marker: an instance of the classes, of none of the entries
    return None


def _sizes_without_copies() -> Any:
    """``DynamoType.size`` as moto's, branch for branch, on the values as they are (``DynamoType(v)`` of a
    DynamoType has its type and value). A value of another class (a subclass, a plain dict) goes moto's way."""
    from moto.dynamodb.models import dynamo_type
    from moto.dynamodb.models.utilities import bytesize

    DynamoType = dynamo_type.DynamoType  # noqa: N806 - the class
    original = DynamoType.size
    sets = ("SS", "NS", "BS")

    def scalar(kind: str, value: Any) -> int:  # moto's size of DynamoType({kind: value}), kind neither L nor M
        if kind == "N":
            return len(str(value))
        if isinstance(value, bool):
            return 1
        return bytesize(value)

    def size(self: Any, rebuilt: bool = False) -> int:
        """``rebuilt``: inside a map, where moto's ``DynamoType(v)`` made each list element and map member a
        DynamoType first (one that was not is sized as that DynamoType: ``DynamoType(v).size()``)."""
        kind, value = self.type, self.value
        if kind == "N":
            return len(str(value))
        if kind in sets:
            return sum([scalar(kind[0], v) for v in value])
        if kind == "L":
            return sum([member(v) if rebuilt else v.size() if type(v) is not DynamoType else size(v)
                        for v in value])
        if kind == "M":
            return sum([bytesize(k) + member(v) for k, v in value.items()])
        if isinstance(value, bool):
            return 1
        return bytesize(value)

    def member(value: Any) -> int:
        return size(value if type(value) is DynamoType else DynamoType(value), True)

    def patched(self: Any) -> int:
        return size(self) if type(self) is DynamoType else original(self)

    return mock.patch.object(DynamoType, "size", patched)
