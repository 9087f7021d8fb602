# SPDX-License-Identifier: MIT
"""Raw-socket HTTP/1 clients for test/e2e/realtime-sse.sh (Python 3 stdlib only).

    sse_client.py PORT chunked PATH          strict chunked framing, last-chunk, then the same
                                             connection serves a second request
    sse_client.py PORT http10 PATH           HTTP/1.0: close-delimited, never chunked
    sse_client.py PORT events PATH [LASTID]  the events (WHATWG parsing), one "id event data"
                                             line each, and "comments N"
    sse_client.py PORT timing PATH           seconds from the request to each event
    sse_client.py PORT leave fin|rst PATH    reads one event, then closes (FIN) or resets (RST)
    sse_client.py PORT many N PATH           N streams at once; prints how many were whole
    sse_client.py PORT stall PATH SECONDS    opens PATH, reads nothing for SECONDS, then resets

Each prints its findings on stdout; a failure is a line starting with "error".
"""
import socket
import struct
import sys
import time

PORT = int(sys.argv[1])
TIMEOUT = 30


def connect(rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(TIMEOUT)
    s.connect(("127.0.0.1", PORT))
    return s


class Reader:
    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def more(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def line(self):
        while b"\r\n" not in self.buf:
            self.more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n:
            self.more()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def head(self):
        status = self.line().decode()
        headers = {}
        while True:
            line = self.line().decode()
            if not line:
                return status, headers
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()

    def chunks(self):
        """Yields the chunks of a chunked body, strictly; ends after the last-chunk."""
        while True:
            size_line = self.line()
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                if self.line() != b"":  # no trailers expected: the blank line ends the body
                    raise ValueError("trailer after the last-chunk")
                return
            data = self.exactly(size)
            if self.exactly(2) != b"\r\n":
                raise ValueError("chunk not followed by CRLF")
            yield data


def request(sock, path, version="1.1", extra=""):
    sock.sendall(("GET %s HTTP/%s\r\nHost: 127.0.0.1\r\n%s\r\n" % (path, version, extra)).encode())


def parse_events(text):
    """WHATWG event stream parsing: returns (events as (id, type, data), comment count)."""
    events, comments = [], 0
    last_id, etype, data = "", "", []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data:
                events.append((last_id, etype or "message", "\n".join(data)))
            etype, data = "", []
        elif line.startswith(":"):
            comments += 1
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "id":
                last_id = value
            elif name == "event":
                etype = value
            elif name == "data":
                data.append(value)
    return events, comments


def chunked(path):
    s = connect()
    r = Reader(s)
    request(s, path)
    status, headers = r.head()
    body = b"".join(r.chunks())
    events, _ = parse_events(body.decode())
    print("status", status.split()[1], "te", headers.get("transfer-encoding"), "cl", headers.get("content-length"),
          "events", len(events))
    # the same connection, right after the last-chunk
    request(s, "/sse/ticks?count=1&interval_ms=0")
    status, headers = r.head()
    body = b"".join(r.chunks())
    print("reused", status.split()[1], len(parse_events(body.decode())[0]))


def http10(path):
    s = connect()
    r = Reader(s)
    request(s, path, "1.0", "Connection: keep-alive\r\n")
    status, headers = r.head()
    body = r.buf
    while True:
        data = s.recv(65536)
        if not data:
            break
        body += data
    events, _ = parse_events(body.decode())
    print("status", status.split()[1], "te", headers.get("transfer-encoding"), "cl", headers.get("content-length"),
          "connection", headers.get("connection"), "events", len(events))


def events_of(path, last_id=None):
    s = connect()
    r = Reader(s)
    request(s, path, extra="Last-Event-ID: %s\r\n" % last_id if last_id is not None else "")
    status, headers = r.head()
    body = b"".join(r.chunks())
    events, comments = parse_events(body.decode())
    print("status", status.split()[1], "type", headers.get("content-type"), "cache", headers.get("cache-control"))
    for e in events:
        print(" ".join(e))
    print("comments", comments)


def timing(path):
    s = connect()
    r = Reader(s)
    t0 = time.monotonic()
    request(s, path)
    r.head()
    text = ""
    for chunk in r.chunks():
        text += chunk.decode()
        while "\n\n" in text:
            block, text = text.split("\n\n", 1)
            if "data:" in block:
                print("%.3f" % (time.monotonic() - t0))


def leave(mode, path):
    s = connect()
    r = Reader(s)
    request(s, path)
    r.head()
    got = b""
    for chunk in r.chunks():
        got += chunk
        if b"\n\n" in got:
            break
    if mode == "rst":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print("left after", got.count(b"data:"), "event(s)")


def many(n, path):
    socks = []
    for _ in range(n):
        s = connect()
        request(s, path)
        socks.append(s)
    whole = 0
    for s in socks:
        try:
            r = Reader(s)
            status, _ = r.head()
            events, _ = parse_events(b"".join(r.chunks()).decode())
            whole += status.split()[1] == "200" and len(events) > 0
        except (OSError, ValueError, EOFError) as e:
            print("error", e)
        s.close()
    print("whole", whole)


def stall(path, seconds):
    s = connect(rcvbuf=4096)
    request(s, path)
    time.sleep(seconds)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print("stalled")


def main():
    cmd, args = sys.argv[2], sys.argv[3:]
    try:
        if cmd == "chunked":
            chunked(args[0])
        elif cmd == "http10":
            http10(args[0])
        elif cmd == "events":
            events_of(args[0], args[1] if len(args) > 1 else None)
        elif cmd == "timing":
            timing(args[0])
        elif cmd == "leave":
            leave(args[0], args[1])
        elif cmd == "many":
            many(int(args[0]), args[1])
        elif cmd == "stall":
            stall(args[0], float(args[1]))
    except (OSError, ValueError, EOFError) as e:
        print("error", type(e).__name__, e)


main()
