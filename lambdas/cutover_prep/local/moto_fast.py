"""Two costs of moto the local harness pays once per warm-up unit, cut without changing what moto answers (issue 33 §3;
``benchmarks/harness_overhead.py`` measured them: the harness was half of a local warm-up's wall time).

- moto's DynamoDB ``Validator`` deep-copies the parsed update expression it validates (``copy.deepcopy``: its memo,
  ``__reduce_ex__`` and ``_reconstruct`` for every node), once or twice per UpdateItem; each chunk a unit reads is
  committed in a transaction of two updates. A third of the commit's samples (py-spy). ``_copy_tree`` copies the
  same tree (moto's AST nodes hold only ``type``, ``children`` and ``parent``) node by node: the copy is a tree of
  the same classes and values, its parents pointing into the copy, the values in it (a DynamoType, a list) deep
  copies as before.
- moto's Step Functions interpreter parses every JSONPath it evaluates anew (``jsonpath_ng.ext.parse``, whose
  parser is built for each call): one per InputPath, ResultPath, Parameters entry of every state of every unit.
  The parsed path is only read (``find``): parsed once per text (``functools.lru_cache``).
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

    return [mock.patch.object(validators.Validator, "__init__", init),
            mock.patch.object(json_path, "parse", functools.lru_cache(maxsize=4096)(jsonpath_ng.ext.parse))]
