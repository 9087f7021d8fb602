# SPDX-License-Identifier: MIT
# The WebSocket cases of test/e2e/realtime-ws.sh against a running canal-realtime, as TAP lines.
#   python3 realtime_ws.py PORT GROUP     GROUP: handshake, framing, close, limits, robust,
#                                          slow, many, chat, lib, idle, drop, fresh
# Raw sockets for the rules of RFC 6455 (the categories of the Autobahn testsuite), the
# websockets library for the ordinary clients. Timeouts are generous: the machine is shared
# and the server may run under a sanitizer.
import asyncio
import base64
import hashlib
import os
import random
import resource
import socket
import struct
import sys
import threading
import time

PORT = int(sys.argv[1])
GROUP = sys.argv[2]
T = 10.0  # the longest wait for anything the server owes
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def ok(name):
    print("ok - " + name, flush=True)


def not_ok(name, why):
    print("not ok - %s: %s" % (name, why), flush=True)


def check(name, want, got):
    if want == got:
        ok(name)
    else:
        not_ok(name, "expected %r, got %r" % (want, got))


def key():
    return base64.b64encode(os.urandom(16)).decode()


def request(path, headers=None, method="GET", version="HTTP/1.1", host=True):
    h = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key(),
         "Sec-WebSocket-Version": "13"}
    if headers is not None:
        h = headers
    lines = ["%s %s %s" % (method, path, version)]
    if host:
        lines.append("Host: 127.0.0.1:%d" % PORT)
    for k, v in (h.items() if isinstance(h, dict) else h):
        lines.append("%s: %s" % (k, v))
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def sock():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=T)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_head(s):
    """The response head (status, headers dict lower-case, rest of bytes)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    hs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hs.setdefault(k.strip().lower(), []).append(v.strip())
    return status, hs, rest


class WS:
    """A raw client: frames out (masked unless told), frames in (checked as the server's)."""

    def __init__(self, path="/ws/echo", extra=b"", headers=None):
        self.s = sock()
        k = key()
        h = headers or {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": k,
                        "Sec-WebSocket-Version": "13"}
        self.s.sendall(request(path, h) + extra)
        self.status, self.headers, self.buf = read_head(self.s)
        self.accept_ok = self.headers.get("sec-websocket-accept", [""])[0] == base64.b64encode(
            hashlib.sha1(h.get("Sec-WebSocket-Key", "").strip().encode() + GUID).digest()).decode()
        self.bad = None  # what was wrong with a server frame

    def send(self, data):
        self.s.sendall(data)

    def recv_exact(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self):
        """(fin, opcode, payload); EOFError at the end of the stream."""
        b0, b1 = self.recv_exact(2)
        if b0 & 0x70 or b1 & 0x80 or (b0 & 15) in (3, 4, 5, 6, 7, 11, 12, 13, 14, 15):
            self.bad = "server frame %02x %02x: RSV, mask or reserved opcode" % (b0, b1)
        n = b1 & 127
        if n == 126:
            n = struct.unpack("!H", self.recv_exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.recv_exact(8))[0]
        if b0 & 8 and (n > 125 or not b0 & 0x80):
            self.bad = "server control frame of %d bytes, fin %d" % (n, b0 >> 7)
        return b0 >> 7, b0 & 15, self.recv_exact(n)

    def message(self):
        """A whole data message (opcode, payload), pongs skipped; ('close', code) on a Close."""
        parts, op = [], None
        while True:
            fin, o, p = self.frame()
            if o == 8:
                return "close", (struct.unpack("!H", p[:2])[0] if len(p) >= 2 else None)
            if o in (9, 10):
                continue
            if o != 0:
                op = o
            parts.append(p)
            if fin:
                return op, b"".join(parts)

    def closed_within(self, secs):
        """1 if the server closes TCP within secs (whatever it sends meanwhile is read)."""
        self.s.settimeout(secs)
        end = time.time() + secs
        try:
            while time.time() < end:
                if not self.s.recv(65536):
                    return 1
        except (socket.timeout, ConnectionResetError):
            return 0 if time.time() >= end else 1
        return 0

    def expect_close(self, name, code):
        """The next message is a Close with code (None: no code, or 1000 if allowed); then the
        server closes TCP within 2 s."""
        try:
            got = self.message()
        except (EOFError, ConnectionResetError, socket.timeout) as e:
            got = repr(e)
        if isinstance(code, tuple):
            if got in [("close", c) for c in code]:
                got = ("close", code)
        check(name, ("close", code), got)
        if self.closed_within(3) != 1:
            not_ok(name + ": TCP closed within 2 s", "still open")
        self.s.close()

    def close(self):
        self.s.close()


def frame(op, payload=b"", fin=1, mask=True, rsv=0, length=None):
    n = len(payload) if length is None else length
    h = bytes([(fin << 7) | (rsv << 4) | op])
    m = 0x80 if mask else 0
    if n < 126:
        h += bytes([m | n])
    elif n < 65536:
        h += bytes([m | 126]) + struct.pack("!H", n)
    else:
        h += bytes([m | 127]) + struct.pack("!Q", n)
    if not mask:
        return h + payload
    k = os.urandom(4)
    return h + k + bytes(b ^ k[i % 4] for i, b in enumerate(payload))


def mask_fast(payload):
    """A masked binary frame of a large payload (the zero mask: masked, and fast to build)."""
    n = len(payload)
    h = bytes([0x82])
    if n < 126:
        h += bytes([0x80 | n])
    elif n < 65536:
        h += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        h += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return h + b"\0\0\0\0" + payload


def close_frame(code=None, reason=b""):
    return frame(8, b"" if code is None else struct.pack("!H", code) + reason)


def echo_ok(name, path="/ws/echo"):
    w = WS(path)
    try:
        w.send(frame(1, b"still here"))
        check(name, (1, b"still here"), w.message())
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        not_ok(name, repr(e))
    w.close()


def metric(name):
    s = sock()
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    return -1


def ws_open_count():
    return metric("canal_ws_connections")


# ---- the handshake ----

def refused(name, raw, statuses, header=None):
    s = sock()
    s.sendall(raw)
    status, hs, _ = read_head(s)
    s.close()
    if status not in statuses:
        not_ok(name, "status %d, expected %s" % (status, statuses))
    elif header is not None and hs.get(header[0], [None])[0] != header[1]:
        not_ok(name, "header %s: %r" % (header[0], hs.get(header[0])))
    else:
        ok("%s (%d)" % (name, status))


def handshake():
    w = WS()
    check("101 Switching Protocols", 101, w.status)
    check("Sec-WebSocket-Accept is SHA-1 of key + GUID", True, w.accept_ok)
    check("Upgrade: websocket", "websocket", w.headers.get("upgrade", [""])[0].lower())
    check("Connection: Upgrade", "upgrade", w.headers.get("connection", [""])[0].lower())
    check("no extension accepted", None, w.headers.get("sec-websocket-extensions"))
    w.close()
    k = key()
    w = WS("/ws/echo?x=1&y", headers={"upgrade": "WebSocket", "connection": "keep-alive, UPGRADE",
                                      "sec-websocket-key": "  %s \t" % k, "sec-websocket-version": "13",
                                      "Sec-WebSocket-Protocol": "chat, superchat",
                                      "Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits"})
    check("any case, other Connection tokens, query ignored, key whitespace: 101", 101, w.status)
    proto = w.headers.get("sec-websocket-protocol")
    check("a subprotocol selected only if offered", True, proto is None or proto[0] in ("chat", "superchat"))
    check("permessage-deflate offered, not accepted", None, w.headers.get("sec-websocket-extensions"))
    w.close()
    good = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key(), "Sec-WebSocket-Version": "13"}

    def without(name, **change):
        h = dict(good)
        for k2, v in change.items():
            k2 = k2.replace("_", "-")
            if v is None:
                h.pop(k2)
            else:
                h[k2] = v
        return h
    for m in ("POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"):
        refused("%s: 405" % m, request("/ws/echo", good, method=m), (405,))
    refused("HTTP/1.0: 4xx or 505", request("/ws/echo", good, version="HTTP/1.0"), tuple(range(400, 500)) + (505,))
    refused("no Upgrade: 4xx", request("/ws/echo", without("", Upgrade=None)), tuple(range(400, 500)))
    refused("Upgrade: not websocket: 4xx", request("/ws/echo", without("", Upgrade="foo")), tuple(range(400, 500)))
    refused("Connection without upgrade: 4xx", request("/ws/echo", without("", Connection="keep-alive")),
            tuple(range(400, 500)))
    refused("no key: 4xx", request("/ws/echo", without("", **{"Sec_WebSocket_Key": None})), tuple(range(400, 500)))
    for name, v in (("empty", ""), ("not base64", "!!!!!!!!!!!!!!!!!!!!!!=="), ("15 bytes", base64.b64encode(b"x" * 15).decode()),
                    ("17 bytes", base64.b64encode(b"x" * 17).decode())):
        refused("key %s: 4xx" % name, request("/ws/echo", without("", **{"Sec_WebSocket_Key": v})), tuple(range(400, 500)))
    refused("key duplicated: 4xx", request("/ws/echo", list(good.items()) + [("Sec-WebSocket-Key", key())]),
            tuple(range(400, 500)))
    refused("no version: 4xx", request("/ws/echo", without("", **{"Sec_WebSocket_Version": None})), tuple(range(400, 500)))
    refused("version not a number: 4xx", request("/ws/echo", without("", **{"Sec_WebSocket_Version": "abc"})),
            tuple(range(400, 500)))
    for v in ("8", "12", "14"):
        refused("version %s: 426 with Sec-WebSocket-Version: 13" % v,
                request("/ws/echo", without("", **{"Sec_WebSocket_Version": v})), (426,), ("sec-websocket-version", "13"))
    refused("no Host: 400", request("/ws/echo", good, host=False), (400,))
    for p in ("/ws/nope", "/ws/", "/ws/chat/", "/ws/chat/bad%21name", "/ws/chat/" + "r" * 65, "/ws/echo/more"):
        refused("unknown path %s: 404" % p[:30], request(p, good), (404,))
    for p in ("/ws/echo", "/ws/chat/room1"):
        s = sock()
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % p).encode())
        status, hs, rest = read_head(s)
        n = int(hs.get("content-length", ["0"])[0])
        while len(rest) < n:
            rest += s.recv(65536)
        if status not in range(400, 500):
            not_ok("plain GET %s: 4xx" % p, status)
        else:
            ok("plain GET %s: %d" % (p, status))
        if "close" in hs.get("connection", [""])[0].lower():
            ok("plain GET %s: said Connection: close" % p)
        else:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status, _, _ = read_head(s)
            check("plain GET %s: the connection serves the next request" % p, 200, status)
        s.close()
    w = WS(extra=frame(1, b"in the same segment"))
    check("first frame in the same segment as the request", (1, b"in the same segment"), w.message())
    w.close()


# ---- framing, fragmentation, pings ----

def framing():
    w = WS()
    for op, p, name in ((1, b"", "empty text"), (2, b"", "empty binary"), (1, "héllo €".encode(), "text"),
                        (2, bytes(range(256)), "binary"), (1, b"a" * 125, "125 bytes"), (1, b"b" * 126, "126 bytes"),
                        (2, b"c" * 65535, "65535 bytes"), (2, b"d" * 65536, "65536 bytes"),
                        (2, b"\xff\xfe invalid utf-8", "binary is never validated"),
                        (1, b"\xf4\x8f\xbf\xbf \xef\xbf\xbf", "U+10FFFF and U+FFFF")):
        w.send(frame(op, p))
        check("echo %s" % name, (op, p), w.message())
    check("server frames unmasked, RSV 0, no reserved opcode", None, w.bad)
    w.send(frame(1, b"a") + frame(2, b"b") + frame(1, b"c"))
    check("several frames per segment", [(1, b"a"), (2, b"b"), (1, b"c")], [w.message() for _ in range(3)])
    w.send(frame(1, b"one ", fin=0) + frame(0, b"two ", fin=0) + frame(0, b"three"))
    check("fragmented text reassembled", (1, b"one two three"), w.message())
    e = "é".encode()
    w.send(frame(1, b"split " + e[:1], fin=0) + frame(0, e[1:]))
    check("a code point split across fragments", (1, b"split " + e), w.message())
    w.send(frame(2, b"x", fin=0) + frame(0, b"", fin=0) + frame(0, b"y"))
    check("fragmented binary with an empty fragment", (2, b"xy"), w.message())
    w.send(frame(1, b"part1 ", fin=0) + frame(9, b"ping!"))
    fin, op, p = w.frame()
    check("ping between fragments: pong at once, before the message completes", (1, 10, b"ping!"), (fin, op, p))
    w.send(frame(0, b"part2"))
    check("then the message completes", (1, b"part1 part2"), w.message())
    w.send(frame(9, b"p" * 125))
    check("ping of 125 bytes: pong with the same payload", (1, 10, b"p" * 125), w.frame())
    w.send(frame(9, b""))
    check("empty ping: empty pong", (1, 10, b""), w.frame())
    w.send(frame(10, b"unsolicited") + frame(1, b"after pong"))
    check("unsolicited pong ignored", (1, b"after pong"), w.message())
    # one byte per segment: a fragmented message with a ping inside, then a close
    data = frame(1, b"by", fin=0) + frame(9, b"pp") + frame(0, b"tes") + frame(1, "ü".encode() * 3)
    for i in range(len(data)):
        w.send(data[i:i + 1])
        time.sleep(0.002)
    got = [w.frame(), w.message(), w.message()]
    check("one byte per segment", [(1, 10, b"pp"), (1, b"bytes"), (1, "ü".encode() * 3)], got)
    # random segment sizes over many frames
    msgs = [os.urandom(random.randint(0, 3000)) for _ in range(30)]
    data = b"".join(frame(2, m) for m in msgs)
    i = 0
    while i < len(data):
        n = random.randint(1, 700)
        w.send(data[i:i + n])
        i += n
    check("random segment sizes", msgs, [w.message()[1] for _ in msgs])
    check("server frames stayed well-formed", None, w.bad)
    w.close()


# ---- failures and close handling ----

def fail(name, data, code, path="/ws/echo", first=None):
    w = WS(path)
    if first is not None:
        w.send(first)
        w.message()
    w.send(data)
    w.expect_close(name, code)


def close_rules():
    for rsv in (1, 2, 4):
        fail("RSV %d set: 1002" % rsv, frame(1, b"x", rsv=rsv), 1002)
    for op in (3, 4, 5, 6, 7, 11, 12, 13, 14, 15):
        fail("opcode %d: 1002" % op, frame(op, b"x"), 1002)
    fail("unmasked client frame: 1002", frame(1, b"x", mask=False), 1002)
    fail("ping of 126 bytes: 1002", frame(9, b"x" * 126), 1002)
    fail("fragmented ping: 1002", frame(9, b"x", fin=0), 1002)
    fail("fragmented close: 1002", frame(8, struct.pack("!H", 1000), fin=0), 1002)
    fail("continuation with no message: 1002", frame(0, b"x"), 1002)
    fail("text inside a fragmented message: 1002", frame(1, b"a", fin=0) + frame(1, b"b"), 1002)
    fail("binary inside a fragmented message: 1002", frame(2, b"a", fin=0) + frame(2, b"b"), 1002)
    fail("close payload of 1 byte: 1002", frame(8, b"\x03"), 1002)
    for c in (0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535):
        fail("close code %d: 1002" % c, close_frame(c), 1002)
    fail("bytes that are not frames: 1002", b"GET / HTTP/1.1\r\n\r\n", 1002)
    fail("64-bit length with the top bit set: 1002 or 1009",
         bytes([0x82, 0xFF]) + struct.pack("!Q", 1 << 63) + b"\0\0\0\0", (1002, 1009))
    fail("a message before the bad frame is echoed first", frame(1, b"x", rsv=1), 1002, first=frame(1, b"first"))
    for name, p in (("overlong", b"\xc0\x80"), ("overlong 3-byte", b"\xe0\x80\x80"), ("surrogate", b"\xed\xa0\x80"),
                    ("above U+10FFFF", b"\xf4\x90\x80\x80"), ("truncated", b"ok \xe2\x82"), ("stray", b"\x80"),
                    ("F5", b"\xf5\x80\x80\x80")):
        fail("invalid UTF-8 (%s): 1007" % name, frame(1, p), 1007)
    fail("invalid UTF-8 across fragments: 1007", frame(1, b"\xe2", fin=0) + frame(0, b"\x28\xa1"), 1007)
    fail("close reason not UTF-8: 1007", close_frame(1000, b"\xff bad"), 1007)
    # a valid reason split over one-byte segments
    w = WS()
    data = close_frame(1000, "fin ☃".encode())
    for i in range(len(data)):
        w.send(data[i:i + 1])
        time.sleep(0.002)
    w.expect_close("a close split one byte per segment, reason UTF-8: answered 1000", 1000)
    for c in (1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999):
        w = WS()
        w.send(close_frame(c, b"bye"))
        w.expect_close("client Close %d: answered with %d" % (c, c), c)
    w = WS()
    w.send(close_frame())
    w.expect_close("empty Close: empty Close (or 1000)", (None, 1000))
    w = WS()
    w.send(close_frame(1000) + frame(1, b"after") + frame(9, b"ping") + close_frame(1000))
    w.expect_close("after the client's Close: nothing but the reply", 1000)
    w = WS()
    w.send(frame(1, b"before close"))
    time.sleep(0.2)
    w.send(close_frame(1000))
    check("a message completed before the Close is echoed first", (1, b"before close"), w.message())
    w.expect_close("then the Close", 1000)


# ---- the size limit ----

def limits():
    lim = 1048576
    w = WS()
    big = os.urandom(lim)
    w.send(mask_fast(big))
    check("a message of exactly 1048576 bytes is accepted", (2, big), w.message())
    parts = [big[:300000], big[300000:700000], big[700000:]]
    # binary, continuation, final continuation; 64-bit lengths, the zero mask
    firsts = (0x02, 0x00, 0x80)
    w.send(b"".join(bytes([firsts[i], 0xFF]) + struct.pack("!Q", len(p)) + b"\0\0\0\0" + p for i, p in enumerate(parts)))
    check("fragments summing to exactly the limit are accepted", (2, big), w.message())
    w.close()
    w = WS()
    w.send(bytes([0x82, 0xFF]) + struct.pack("!Q", lim + 1) + b"\0\0\0\0")  # the header only
    w.expect_close("limit + 1 in one frame: 1009 from the header, before any payload", 1009)
    w = WS()
    w.send(bytes([0x02, 0xFF]) + struct.pack("!Q", lim) + b"\0\0\0\0" + big)
    w.send(bytes([0x80, 0x81]) + b"\0\0\0\0")  # a continuation header of 1 byte, no payload
    w.expect_close("fragments summing to limit + 1: 1009 before the last payload", 1009)
    echo_ok("other connections unaffected after 1009")


# ---- robustness ----

def robust():
    base = ws_open_count()
    for name in ("reset mid-frame", "FIN mid-frame", "FIN without a Close", "reset mid-handshake"):
        w = WS() if name != "reset mid-handshake" else None
        if w is None:
            s = sock()
            s.sendall(request("/ws/echo")[:30])
        else:
            s = w.s
            if name != "FIN without a Close":
                s.sendall(frame(2, b"z" * 1000)[:300])
        if "reset" in name:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        else:
            s.shutdown(socket.SHUT_WR)
            s.settimeout(5)
            try:
                eof = 0
                end = time.time() + 5
                while time.time() < end:
                    if not s.recv(65536):
                        eof = 1
                        break
            except (socket.timeout, ConnectionResetError):
                eof = 1 if time.time() < end else 0
            check("%s: the server closes its side within 5 s" % name, 1, eof)
            s.close()
        echo_ok("%s: other connections unaffected" % name)
    end = time.time() + 5
    while time.time() < end and ws_open_count() > base:
        time.sleep(0.1)
    check("abrupt clients cleaned up (open WebSockets back to %d)" % base, base, ws_open_count())


def slow():
    """A client that stops reading while 16 MiB are queued for it does not delay the others."""
    slowc = WS()
    slowc.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    msg = mask_fast(b"s" * (1 << 20))
    stop = threading.Event()

    def pump():
        try:
            for _ in range(16):
                slowc.s.sendall(msg)
        except OSError:
            pass
        stop.set()
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    worst = 0.0
    others = [WS() for _ in range(5)]
    for i in range(20):
        for o in others:
            t0 = time.time()
            o.send(frame(1, b"ping %d" % i))
            got = o.message()
            worst = max(worst, time.time() - t0)
            if got != (1, b"ping %d" % i):
                not_ok("slow reader: others echo", got)
        time.sleep(0.05)
    stop.wait(30)
    check("a client with 16 MiB queued and not reading: the others echo in under 2 s (worst %.3f s)" % worst,
          True, worst < 2)
    for o in others:
        o.close()
    slowc.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    slowc.close()
    echo_ok("after the slow reader: a fresh echo")


def drop():
    """With --ws-max-queued 4 MiB: a client 24 MiB behind is dropped, and counted."""
    before = metric("canal_ws_dropped_total")
    slowc = WS()
    slowc.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    msg = mask_fast(b"s" * (1 << 20))
    try:
        for _ in range(24):
            slowc.s.sendall(msg)
    except OSError:
        pass
    end = time.time() + T
    while time.time() < end and metric("canal_ws_dropped_total") == before:
        time.sleep(0.1)
    check("a client past ws-max-queued is dropped and counted", before + 1, metric("canal_ws_dropped_total"))
    slowc.close()
    echo_ok("after the drop: a fresh echo")


def many():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    import websockets

    async def one(i):
        async with websockets.connect("ws://127.0.0.1:%d/ws/echo" % PORT, open_timeout=60, close_timeout=20) as c:
            await c.send("conn %d" % i)
            return await asyncio.wait_for(c.recv(), 60) == "conn %d" % i

    async def run():
        # connect in waves so the listen backlog is not the test
        conns = []
        for i in range(1000):
            conns.append(await websockets.connect("ws://127.0.0.1:%d/ws/echo" % PORT, open_timeout=60,
                                                  close_timeout=20, ping_interval=None))
        open_now = ws_open_count()
        for i, c in enumerate(conns):
            await c.send("conn %d" % i)
        got = await asyncio.gather(*[asyncio.wait_for(c.recv(), 60) for c in conns])
        good = sum(1 for i, g in enumerate(got) if g == "conn %d" % i)
        await asyncio.gather(*[c.close() for c in conns])
        return open_now, good
    open_now, good = asyncio.run(run())
    check("1000 concurrent echo connections open", True, open_now >= 1000)
    check("1000 concurrent echo connections echo", 1000, good)


def chat():
    import websockets

    async def run():
        url = "ws://127.0.0.1:%d/ws/chat/" % PORT
        a = [await websockets.connect(url + "room-a", ping_interval=None) for _ in range(6)]
        b = [await websockets.connect(url + "room_B", ping_interval=None) for _ in range(2)]
        await asyncio.sleep(0.3)
        n = 30
        for i in range(n):
            for k, c in enumerate(a):
                await c.send("%d:%d" % (k, i))

        async def collect(c, count):
            out = []
            while len(out) < count:
                out.append(await asyncio.wait_for(c.recv(), 30))
            return out
        got = await asyncio.gather(*[collect(c, n * len(a)) for c in a])
        in_order = all([int(m.split(":")[1]) for m in g if m.startswith("%d:" % k)] == list(range(n))
                       for g in got for k in range(len(a)))
        complete = all(sorted(g) == sorted("%d:%d" % (k, i) for k in range(len(a)) for i in range(n)) for g in got)
        await b[0].send("only b")
        b_got = [await asyncio.wait_for(c.recv(), 10) for c in b]
        leak = []
        for c in a:
            try:
                leak.append(await asyncio.wait_for(c.recv(), 0.3))
            except asyncio.TimeoutError:
                pass
        # a member leaves cleanly, another abruptly; the room goes on
        await a[0].close()
        a[1].transport.abort()
        await asyncio.sleep(0.3)
        await a[2].send("after leaving")
        rest = [await asyncio.wait_for(c.recv(), 10) for c in a[2:]]
        late = await websockets.connect(url + "room-a", ping_interval=None)
        await asyncio.sleep(0.3)
        await a[3].send("to the late joiner")
        late_got = await asyncio.wait_for(late.recv(), 10)
        for c in a[2:] + b + [late]:
            await c.close()
        return in_order, complete, b_got, leak, rest, late_got
    in_order, complete, b_got, leak, rest, late_got = asyncio.run(run())
    check("chat: every member receives every message of the room", True, complete)
    check("chat: each sender's messages in order, across --threads 2", True, in_order)
    check("chat: another room gets its own message (sender included)", ["only b", "only b"], b_got)
    check("chat: rooms are isolated", [], leak)
    check("chat: after members left (cleanly, abruptly) the room goes on", ["after leaving"] * 4, rest)
    check("chat: a late joiner gets what comes after it joined, no history", "to the late joiner", late_got)


def lib():
    import websockets

    async def run():
        async with websockets.connect("ws://127.0.0.1:%d/ws/echo" % PORT, max_size=2 << 20) as c:
            await c.send("websockets text")
            t = await c.recv()
            await c.send(b"\x00\x01binary")
            bb = await c.recv()
            await c.send(["frag", "mented"])
            f = await c.recv()
            pong = await c.ping(b"lib")
            await asyncio.wait_for(pong, 10)
            big = os.urandom(1 << 20)
            await c.send(big)
            g = await c.recv()
        return t, bb, f, g == big
    check("python websockets: echo text, binary, fragments, ping, 1 MiB",
          ("websockets text", b"\x00\x01binary", "fragmented", True), asyncio.run(run()))


def idle():
    """With --ws-idle-timeout 400: a silent client is pinged, then closed with 1001; one that
    answers pings stays."""
    w = WS()
    t0 = time.time()
    fin, op, p = w.frame()
    check("idle: a silent client is pinged", 9, op)
    w.expect_close("idle: and closed with 1001 when it stays silent", 1001)
    check("idle: within a few timeouts (%.1f s)" % (time.time() - t0), True, time.time() - t0 < 5)
    w = WS()
    end = time.time() + 1.5
    alive = True
    w.s.settimeout(0.2)
    while time.time() < end:
        try:
            fin, op, p = w.frame()
            if op == 9:
                w.send(frame(10, p))
            elif op == 8:
                alive = False
        except socket.timeout:
            pass
    w.s.settimeout(T)
    w.send(frame(1, b"alive"))
    check("idle: a client that answers pings stays open", (True, (1, b"alive")), (alive, w.message()))
    w.close()


def shutdown():
    """Connects, then waits for the server's Close (the script stops the server): prints it."""
    w = WS()
    print("connected", flush=True)
    w.s.settimeout(30)
    try:
        got = w.message()
    except Exception as e:  # noqa: BLE001
        got = repr(e)
    print("closed %s" % (got[1] if got[0] == "close" else got), flush=True)
    if got[0] == "close":
        w.send(close_frame(got[1]))
    w.close()


{"handshake": handshake, "framing": framing, "close": close_rules, "limits": limits, "robust": robust,
 "slow": slow, "drop": drop, "many": many, "chat": chat, "lib": lib, "idle": idle, "shutdown": shutdown,
 "fresh": lambda: echo_ok("a fresh echo still works")}[GROUP]()
