# SPDX-License-Identifier: MIT
"""Clients of canal-realtime's rooms for test/e2e/rooms.sh (websockets library + raw SSE).

    rooms_client.py exchange A B ROOM N   WebSocket members (2 on A, 2 on B) and SSE members
                                          (1 on A, 1 on B) of ROOM, and members of another
                                          room on both; each WebSocket member sends N
                                          messages at once. Prints one "name value" line per
                                          finding (see rooms.sh).
    rooms_client.py quick A B ROOM        one WebSocket member on A and one on B and an SSE
                                          member on B exchange one message each way; prints
                                          "ok" or "fail ...". For the checks after a fault.
    rooms_client.py leave A B ROOM        a member of ROOM on B resets its connection after
                                          joining; members on A and B still exchange: "ok".
    rooms_client.py hold A ROOM SECONDS   a WebSocket and an SSE member held open through a fault;
                                          prints "alive" if the server answered or closed them
                                          cleanly (no hang past the fault).
A and B are base URLs http://127.0.0.1:PORT.
"""
import asyncio
import socket
import struct
import sys
import time
import urllib.parse

import websockets


def hostport(u):
    p = urllib.parse.urlparse(u)
    return p.hostname, p.port


def ws_url(base, room):
    h, p = hostport(base)
    return "ws://%s:%d/ws/chat/%s" % (h, p, room)


class SSE:
    """A raw event-stream reader: events' data, in order."""

    def __init__(self):
        self.events, self.status, self.ctype, self.clen = [], 0, "", None

    async def open(self, base, room):
        h, p = hostport(base)
        self.r, self.w = await asyncio.open_connection(h, p)
        self.w.write(("GET /sse/chat/%s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n"
                      % (room, h, p)).encode())
        await self.w.drain()
        head = await asyncio.wait_for(self.r.readuntil(b"\r\n\r\n"), 10)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        chunked = False
        for line in lines[1:]:
            k, _, v = line.partition(":")
            k, v = k.strip().lower(), v.strip()
            if k == "content-type":
                self.ctype = v
            elif k == "content-length":
                self.clen = v
            elif k == "transfer-encoding" and "chunked" in v.lower():
                chunked = True
        self.task = asyncio.ensure_future(self.read(chunked))

    async def body(self, chunked):
        if not chunked:
            while True:
                d = await self.r.read(65536)
                if not d:
                    return
                yield d
        while True:
            size = int((await self.r.readline()).split(b";")[0], 16)
            if size == 0:
                return
            d = await self.r.readexactly(size + 2)
            yield d[:-2]

    async def read(self, chunked):
        buf, data = b"", []
        try:
            async for d in self.body(chunked):
                buf += d
                while b"\n" in buf:
                    line, _, buf = buf.partition(b"\n")
                    line = line.rstrip(b"\r").decode()
                    if line == "":
                        if data:
                            self.events.append("\n".join(data))
                        data = []
                    elif line.startswith("data:"):
                        v = line[5:]
                        data.append(v[1:] if v.startswith(" ") else v)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass

    def close(self, reset=False):
        if reset:
            s = self.w.get_extra_info("socket")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.w.close()
        self.task.cancel()


class WSMember:
    def __init__(self, name):
        self.name, self.got = name, []

    async def open(self, base, room):
        self.c = await websockets.connect(ws_url(base, room), open_timeout=10, close_timeout=2,
                                          ping_interval=None)
        self.task = asyncio.ensure_future(self.read())

    async def read(self):
        try:
            async for m in self.c:
                self.got.append(m)
        except websockets.ConnectionClosed:
            pass

    async def close(self):
        self.task.cancel()
        await self.c.close()


def check_stream(got, senders, n):
    """(exactly once, in order per sender) for a member's received messages."""
    once = sorted(got) == sorted("%s-%d" % (s, i) for s in senders for i in range(n))
    order = all([m for m in got if m.startswith(s + "-")] == ["%s-%d" % (s, i) for i in range(n)]
                for s in senders)
    return once, order


async def exchange(a, b, room, n):
    ws = [WSMember("a1"), WSMember("a2"), WSMember("b1"), WSMember("b2")]
    for m in ws:
        await m.open(a if m.name[0] == "a" else b, room)
    sse = [SSE(), SSE()]
    await sse[0].open(a, room)
    await sse[1].open(b, room)
    other = [WSMember("oa"), WSMember("ob")]
    await other[0].open(a, room + "-other")
    await other[1].open(b, room + "-other")
    osse = SSE()
    await osse.open(b, room + "-other")
    print("sse status", sse[0].status, sse[1].status)
    print("sse content-type", sse[0].ctype)
    print("sse content-length", sse[0].clen)
    await asyncio.sleep(0.5)
    senders = [m.name for m in ws]

    async def send_all(m):
        for i in range(n):
            await m.c.send("%s-%d" % (m.name, i))

    await asyncio.gather(*[send_all(m) for m in ws])
    want = len(senders) * n
    deadline = time.time() + 20
    while time.time() < deadline and not (all(len(m.got) >= want for m in ws) and
                                          all(len(s.events) >= want for s in sse)):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # anything extra (a duplicate) would arrive now
    for m in ws:
        once, order = check_stream(m.got, senders, n)
        print("ws %s once %d order %d count %d" % (m.name, once, order, len(m.got)))
    for i, s in enumerate(sse):
        once, order = check_stream(s.events, senders, n)
        print("sse %s once %d order %d count %d" % ("ab"[i], once, order, len(s.events)))
    print("other room", len(other[0].got) + len(other[1].got) + len(osse.events))
    for m in ws + other:
        await m.close()
    for s in sse + [osse]:
        s.close()


async def quick(a, b, room):
    try:
        x, y = WSMember("qa"), WSMember("qb")
        await x.open(a, room)
        await y.open(b, room)
        s = SSE()
        await s.open(b, room)
        await asyncio.sleep(0.5)
        await x.c.send("from-a")
        await y.c.send("from-b")
        want = {"from-a", "from-b"}
        deadline = time.time() + 2
        while time.time() < deadline and not (set(x.got) >= want and set(y.got) >= want and set(s.events) >= want):
            await asyncio.sleep(0.05)
        ok = sorted(x.got) == sorted(want) and sorted(y.got) == sorted(want) and sorted(s.events) == sorted(want)
        print("ok" if ok else "fail a=%r b=%r sse=%r" % (x.got, y.got, s.events))
        await x.close()
        await y.close()
        s.close()
    except (OSError, asyncio.TimeoutError, websockets.InvalidHandshake, websockets.ConnectionClosed) as e:
        print("fail %r" % e)


async def leave(a, b, room):
    gone = WSMember("gone")
    await gone.open(b, room)
    gs = SSE()
    await gs.open(b, room)
    await asyncio.sleep(0.3)
    sock = gone.c.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    gone.c.transport.abort()
    gs.close(reset=True)
    await asyncio.sleep(0.3)
    await quick(a, b, room)


async def hold(a, room, secs):
    m = WSMember("h")
    await m.open(a, room)
    s = SSE()
    await s.open(a, room)
    await asyncio.sleep(secs)
    try:
        await asyncio.wait_for(m.c.ping(), 3)
        print("alive")
    except websockets.ConnectionClosed:
        print("alive")  # closed by the server: allowed
    except asyncio.TimeoutError:
        print("hung")
    await m.close()
    s.close()


def main():
    cmd = sys.argv[1]
    if cmd == "exchange":
        asyncio.run(exchange(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
    elif cmd == "quick":
        asyncio.run(quick(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif cmd == "leave":
        asyncio.run(leave(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif cmd == "hold":
        asyncio.run(hold(sys.argv[2], sys.argv[3], float(sys.argv[4])))


main()
