"""The local harness's cuts of moto's per-unit costs (local.moto_fast, issue 33 §3) change nothing moto answers."""

from __future__ import annotations

import copy

import pytest
from moto.dynamodb.parsing.ast_nodes import Node
from moto.dynamodb.parsing.expressions import UpdateExpressionParser

from cutover_prep.dal.store import evidence_key
from cutover_prep.local import moto_fast

EXPRESSIONS = [
    "SET #s = :status, seq = :next, #c = :cursor, started_at = if_not_exists(started_at, :now), "
    "chunks = list_append(if_not_exists(chunks, :empty), :chunk) ADD blocks_read :blocks, bytes_read :bytes",
    "SET a.b[2].c = :v, d = d + :one REMOVE e[1], f.g DELETE h :set",
    "SET updated_at = :now ADD bytes_read :bytes, blocks_read :blocks, chunks_read :chunk, units_done :one",
]


def shape(node, parent=None):
    """A node as its type, its class, its parent (checked to be the node above it) and its children, recursively."""
    if isinstance(node, Node):
        assert node.parent is parent, (node, node.parent, parent)
        return type(node), node.type, [shape(child, node) for child in node.children or []]
    return type(node), repr(node)


def nodes(node):
    yield node
    for child in node.children or []:
        if isinstance(child, Node):
            yield from nodes(child)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_the_tree_copy_is_the_deep_copy(text):
    tree = UpdateExpressionParser.make(text)
    fast, deep = moto_fast._copy_tree(tree), copy.deepcopy(tree)
    assert shape(fast) == shape(deep) == shape(tree)
    assert not {id(n) for n in nodes(fast)} & {id(n) for n in nodes(tree)}  # no node shared with the original


def test_a_workflows_commits_through_the_patched_moto_count_as_before(store):
    """Store.commit_progress (a transaction of two updates, each validated by moto's Validator) with the patches
    started: the unit and the run item hold what three chunks added, by hand (3 x 8192 bytes, 3 chunks listed)."""
    patches = moto_fast.patches()
    for p in patches:
        p.start()
    try:
        store.put_json(evidence_key("r1", "units.json"), [])
        store._ddb.put_item(TableName=store.table, Item={"pk": {"S": "RUN#r1"}, "sk": {"S": "RUN"}})
        for seq in range(3):
            store.commit_progress("r1", "u1", seq=seq, cursor={"range": 0, "block": seq + 1}, blocks=1, bytes_=8192,
                                  seconds=0.01, method="m", done=seq == 2, planned_bytes=3 * 8192)
        unit = next(iter(store.units("r1"))).stored()
        run = store.get_run("r1").stored()
    finally:
        for p in reversed(patches):
            p.stop()
    assert (unit["bytes_read"], unit["blocks_read"], unit["seq"], unit["status"]) == (3 * 8192, 3, 3, "DONE")
    assert len(unit["chunks"]) == 3 and unit["cursor"] == {"range": 0, "block": 3}
    assert (run["bytes_read"], run["units_done"], run["chunks_read"]) == (3 * 8192, 1, 3)
