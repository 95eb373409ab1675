"""A relation fork's data files as ``pg_read_binary_file`` reads them: the fork's file relative to the data
directory, the segment file (1 GB by default) that holds a block, and a block range read through the server, at
most ``MAX_READ_BYTES`` a call."""

from __future__ import annotations

import psycopg

from cutover_prep.engines.base import PermanentReadError
from cutover_prep.engines.locators import PgLocator

MAX_READ_BYTES = 64 * 1024 * 1024  # one pg_read_binary_file call at most


def read_files(conn: psycopg.Connection, loc: PgLocator, first: int, last: int, *, block_size: int,
               segment_bytes: int) -> int:
    """Blocks ``first..last`` of the fork ``loc`` read with pg_read_binary_file: the blocks the server returned
    (fewer when the file is shorter than planned: truncated since discovery)."""
    base = relation_file_base(conn, loc)
    bs, per_file = block_size, segment_bytes // block_size
    read = 0
    block = first
    while block <= last:
        path, in_file = segment_file(base, block, per_file)
        count = min(last - block + 1, per_file - in_file, MAX_READ_BYTES // bs)
        got = conn.execute("SELECT length(pg_read_binary_file(%s, %s, %s))",
                           (path, in_file * bs, count * bs)).fetchone()[0]
        read += got // bs
        if got < count * bs:  # the file is shorter than planned (truncated since discovery)
            break
        block += count
    return read


def relation_file_base(conn: psycopg.Connection, loc: PgLocator) -> str:
    """The data file of a relation fork, relative to the data directory (first 1 GB segment)."""
    row = conn.execute("SELECT pg_relation_filepath(%s::oid)", (loc.oid,)).fetchone()
    if row[0] is None:
        raise PermanentReadError(f"relation {loc.oid} has no file (dropped?)")
    return row[0] + ("" if loc.fork == "main" else f"_{loc.fork}")


def segment_file(base: str, block: int, blocks_per_file: int) -> tuple[str, int]:
    """The segment file holding ``block`` of a fork split into files, and the block's index in it."""
    segno, in_file = divmod(block, blocks_per_file)
    return (base if segno == 0 else f"{base}.{segno}"), in_file
