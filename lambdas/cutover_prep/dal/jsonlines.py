"""S3 objects written in parts and read as streams (issue 32): JSON Lines, and a JSON array one item a line.

``JsonLinesWriter`` holds at most ``JSON_LINES_PART_BYTES`` at a time and sends it as a part of a multipart upload
(one plain PutObject when the whole is smaller); it aborts the upload when the writing fails, so no part is left
behind. ``json.dumps`` escapes every line break inside a value, so a row is one line.

With ``array=True`` the object is one JSON array, ``[`` before the first item, ``,`` before each other one and ``]``
at the end, every item on a line of its own (``[{..}\\n,{..}\\n]``): valid JSON for a reader of the whole (the
Distributed Map's ItemReader reads ``units.json`` so), and read item by item by ``array_rows``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

# S3 takes a multipart upload's parts at 5 MiB at least, the last one excepted
# (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html): a JSON Lines object is sent 8 MiB at a time
JSON_LINES_PART_BYTES = 8 * 2**20
JSON_LINES_READ_BYTES = 2**20


def _lines(body: Any, first: bytes = b"") -> Iterator[bytes]:
    """The lines of a streaming body (``first``: bytes already read from it), one read buffer in memory."""
    rest = first
    try:
        while chunk := body.read(JSON_LINES_READ_BYTES):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
        yield rest
    finally:
        body.close()


def array_rows(body: Any) -> Iterator[Any]:
    """The items of a JSON array in ``body``: line by line when ``JsonLinesWriter(array=True)`` wrote it (it starts
    ``[{`` or is ``[]``), else the whole parsed at once (an indented document of before)."""
    head = body.read(2)
    if head not in (b"[{", b"[]"):
        rows = json.loads(head + body.read())
        body.close()
        yield from rows
        return
    for line in _lines(body, head):
        text = line.strip()
        if text in (b"", b"[]", b"]"):
            continue
        yield json.loads(text[1:])  # after its "[" or ","


class JsonLinesWriter:
    """One S3 object of JSON Lines (or, ``array``, a JSON array one item a line) written in parts."""

    def __init__(self, s3: Any, bucket: str, key: str, part_bytes: int | None = None, *,
                 array: bool = False) -> None:
        self.s3, self.bucket, self.key, self.array = s3, bucket, key, array
        self.part_bytes = JSON_LINES_PART_BYTES if part_bytes is None else part_bytes
        self.content_type = "application/json" if array else "application/x-ndjson"
        self.rows = 0
        self._buffer = bytearray()
        self._upload: str | None = None
        self._parts: list[dict[str, Any]] = []

    def __enter__(self) -> JsonLinesWriter:
        return self

    def write(self, row: Any) -> None:
        if self.array:
            self._buffer += b"," if self.rows else b"["
        self._buffer += json.dumps(row, default=str).encode() + b"\n"
        self.rows += 1
        if len(self._buffer) >= self.part_bytes:
            self._send_part()

    def _send_part(self) -> None:
        if self._upload is None:
            self._upload = self.s3.create_multipart_upload(Bucket=self.bucket, Key=self.key,
                                                           ContentType=self.content_type)["UploadId"]
        number = len(self._parts) + 1
        etag = self.s3.upload_part(Bucket=self.bucket, Key=self.key, UploadId=self._upload, PartNumber=number,
                                   Body=bytes(self._buffer))["ETag"]
        self._parts.append({"ETag": etag, "PartNumber": number})
        self._buffer.clear()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            if self._upload is not None:
                self.s3.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self._upload)
            return
        if self.array:
            self._buffer += b"]" if self.rows else b"[]"
        if self._upload is None:
            self.s3.put_object(Bucket=self.bucket, Key=self.key, ContentType=self.content_type,
                               Body=bytes(self._buffer))
            return
        if self._buffer:
            self._send_part()
        self.s3.complete_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self._upload,
                                          MultipartUpload={"Parts": self._parts})
