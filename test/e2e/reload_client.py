# SPDX-License-Identifier: MIT
"""The client side of test/e2e/reload.sh: a keep-alive connection and a request in flight
across a reload.

    reload_client.py PORT DIR

Opens one HTTP/1.1 connection and asks GET /greet on it; starts GET /slow on a second
connection (the server answers it once DIR/release exists); writes DIR/ready and waits for
DIR/go (the shell reloads meanwhile); then asks GET /greet again on the first connection and
collects /slow's answer. Prints one line per fact: "before <greeting>", "after <greeting>",
"same connection yes|no", "slow <status> <body>".
"""
import http.client
import os
import sys
import threading
import time

port, d = int(sys.argv[1]), sys.argv[2]
keep = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
keep.request("GET", "/greet")
r = keep.getresponse()
print("before", r.read().decode().strip())
sock = keep.sock

slow = {}


def ask_slow():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        c.request("GET", "/slow")
        a = c.getresponse()
        slow["answer"] = "%d %s" % (a.status, a.read().decode().strip())
    except Exception as e:  # the answer is checked, whatever went wrong
        slow["answer"] = "error %s" % e


t = threading.Thread(target=ask_slow)
t.start()
open(os.path.join(d, "ready"), "w").close()
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
try:
    keep.request("GET", "/greet")
    r = keep.getresponse()
    print("after", r.read().decode().strip())
except Exception as e:
    print("after error", e)
print("same connection", "yes" if keep.sock is sock and sock is not None else "no")
t.join(60)
print("slow", slow.get("answer", "none"))
