"""Rowids of the Oracle engine's rowid chunks, built without a database: the extended rowid text
(``rowid_of``), the binds of one chunk (``rowid_bounds``, ``rowid_range_binds``; bigfile tablespaces split the
block number across the file and block fields), and the statements that prove on the server that the engine's
rowids are Oracle's (``ROWID_CREATE_SQL``, ``BIGFILE_ROUNDTRIP_SQL``: the preflight and the live test)."""

from __future__ import annotations

# The server's own rowid for (objd, file, block, row) (PL/SQL Packages, "DBMS_ROWID.ROWID_CREATE"): the preflight
# and the live test prove ``rowid_of`` builds the same text.
ROWID_CREATE_SQL = "SELECT ROWIDTOCHAR(DBMS_ROWID.ROWID_CREATE(1, :objd, :fno, :block, :row_number)) FROM dual"


SMALLFILE_BLOCK_BITS = 22  # a smallfile rowid: 10 bits of relative file number, 22 of block number


def rowid_range_binds(objd: int, rfno: int, first_block: int, last_block: int, bigfile: bool) -> dict[str, int]:
    """The rowid fields (``rowid_bounds``) of blocks ``first_block..last_block`` of one file.

    ROWID_CREATE builds the smallfile layout. In a bigfile tablespace the rowid has no file number
    (DBA_EXTENTS says RELATIVE_FNO 1024, which 10 bits cannot hold): its block number is encoded
    across the file and block fields (DBMS_ROWID: ROWID_BLOCK_NUMBER(rowid, 'BIGFILE')), so the
    block is split into its high bits (the file field) and its low 22 bits."""
    if not bigfile:
        return {"objd": objd, "lo_fno": rfno, "lo_block": first_block, "hi_fno": rfno, "hi_block": last_block}
    mask = (1 << SMALLFILE_BLOCK_BITS) - 1
    return {"objd": objd, "lo_fno": first_block >> SMALLFILE_BLOCK_BITS, "lo_block": first_block & mask,
            "hi_fno": last_block >> SMALLFILE_BLOCK_BITS, "hi_block": last_block & mask}


# The bigfile encoding proven on the server: the block number DBMS_ROWID reads back from the rowid
# ``rowid_range_binds`` builds must be the block asked for (for the preflight and the live test).
BIGFILE_ROUNDTRIP_SQL = ("SELECT DBMS_ROWID.ROWID_BLOCK_NUMBER(DBMS_ROWID.ROWID_CREATE(1, :objd, :fno, :block, 0), "
                         "'BIGFILE') FROM dual")


# Extended rowids (Concepts, "Rowid Format", https://docs.oracle.com/cd/G47991_01/cncpt/img_text/cncpt249.html:
# AAAPec = data object number, AAF = relative file number, AAAABS = block number, AAA = row number, each a base-64
# number over A-Z a-z 0-9 + /). DBMS_PARALLEL_EXECUTE's CREATE_CHUNKS_BY_ROWID hands each chunk out as two such
# rowids, START_ROWID and END_ROWID; the engine builds them the same way from the extents it plans.
ROWID_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
ROWID_FIELDS = (("objd", 6, 32), ("fno", 3, 10), ("block", 6, 22), ("row_number", 3, 16))  # name, chars, bits
MAX_ROW_NUMBER = 32767  # the last row slot of a block, as DBMS_PARALLEL_EXECUTE's chunks end


def rowid_of(objd: int, fno: int, block: int, row_number: int) -> str:
    """The 18-character extended rowid of (data object, relative file, block, row)."""
    out = []
    for (name, chars, bits), value in zip(ROWID_FIELDS, (objd, fno, block, row_number), strict=True):
        if not 0 <= int(value) < (1 << bits):
            raise ValueError(f"rowid {name} {value} does not fit its {bits} bits")
        digits, value = [], int(value)
        for _ in range(chars):
            digits.append(ROWID_DIGITS[value % 64])
            value //= 64
        out.append("".join(reversed(digits)))
    return "".join(out)


def rowid_bounds(objd: int, rfno: int, first_block: int, last_block: int, bigfile: bool) -> dict[str, str]:
    """Binds of ``rowid_range_count_sql``: the rowid range of blocks ``first_block..last_block`` of one file,
    from row 0 of the first block to row 32767 of the last (``rowid_range_binds`` places a bigfile block)."""
    b = rowid_range_binds(objd, rfno, first_block, last_block, bigfile)
    return {"start_id": rowid_of(b["objd"], b["lo_fno"], b["lo_block"], 0),
            "end_id": rowid_of(b["objd"], b["hi_fno"], b["hi_block"], MAX_ROW_NUMBER)}
