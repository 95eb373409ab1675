"""A PostgreSQL server's front, for a test: its first ``refuse`` connections get the answer a starting server
gives (``FATAL 57P03 the database system is starting up``, PostgreSQL's postmaster/backend_startup.c), every
later one is forwarded, byte for byte, to the real server behind it. So a client sees a server that finished
starting between its failed connection and whatever it does next (a ping, a second try).

Run as its own process (``python -m tests.integration.pg_starting_front LISTEN_PORT TARGET_HOST TARGET_PORT
REFUSE``; port 0: any free one): libpq's ``PQping`` holds the GIL in psycopg's binary build, so a front in the
test's own process could not answer it. It prints ``ready PORT`` once it listens.
"""

from __future__ import annotations

import socket
import struct
import sys
import threading

SSL_REQUEST = 80877103  # the code of an SSLRequest (PostgreSQL protocol, "Message Formats")
GSS_REQUEST = 80877104


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the client went away")
        data += chunk
    return data


def _starting_up(conn: socket.socket) -> None:
    """Reads the startup packet (declining SSL or GSS encryption first) and answers as a starting server."""
    while True:
        length = struct.unpack("!I", _read_exactly(conn, 4))[0]
        body = _read_exactly(conn, length - 4)
        if struct.unpack("!I", body[:4])[0] in (SSL_REQUEST, GSS_REQUEST):
            conn.sendall(b"N")
            continue
        break
    fields = b"".join(code + text.encode() + b"\0" for code, text in (
        (b"S", "FATAL"), (b"V", "FATAL"), (b"C", "57P03"), (b"M", "the database system is starting up")))
    message = fields + b"\0"
    conn.sendall(b"E" + struct.pack("!I", len(message) + 4) + message)


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _forward(conn: socket.socket, target: tuple[str, int]) -> None:
    upstream = socket.create_connection(target)
    threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()
    _pipe(conn, upstream)


def serve(listen_port: int, target: tuple[str, int], refuse: int) -> None:
    server = socket.create_server(("127.0.0.1", listen_port))
    print(f"ready {server.getsockname()[1]}", flush=True)
    refused = 0
    while True:
        conn, _ = server.accept()
        if refused < refuse:
            refused += 1
            try:
                _starting_up(conn)
            except (OSError, ConnectionError):
                pass
            conn.close()
            continue
        threading.Thread(target=_forward, args=(conn, target), daemon=True).start()


if __name__ == "__main__":
    port, host, target_port, refuse = sys.argv[1:5]
    serve(int(port), (host, int(target_port)), int(refuse))
