# SPDX-License-Identifier: MIT
# test/e2e/accesslog.sh's raw client: sends each request of a set, as bytes, on its own
# connection (Connection: close), and prints each answer's status line.
#   python3 acclog_send.py PORT hostile|plain
import socket
import sys

port, which = int(sys.argv[1]), sys.argv[2]
HOSTILE = [
    # (target, user agent, referer, request ID): quotes, backslashes, '}' '~', tabs, UTF-8
    # that is valid, and bytes that are not (a lone 0xff, a cut sequence, a surrogate)
    (b'/home/plaintext', b'curl/8', None, b'id-1'),
    (b'/home/plaintext?q=%22"\\}~{|', b'a "quoted" \\ agent\t~}', b'http://r/?x="y"', b'id-2'),
    (b'/home/plaintext?u=\xc3\xa9\xe2\x82\xac', b'caf\xc3\xa9 \xf0\x9f\x98\x80', b'http://\xc3\xa9/', b'id-3'),
    (b'/home/plaintext?bad=\xff\xc3(\xed\xa0\x80\xe2\x82', b'\xff\xfe\x80 \xc0\xaf', b'\xe2\x82', b'id-4'),
    (b'/home/plaintext', b'\t\x7e', b'-', b'id-5'),
]
PLAIN = [(b'/home/plaintext', b'curl/8', None, None)]


def send(target, ua, ref, rid):
    head = b'GET ' + target + b' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n'
    head += b'User-Agent: ' + ua + b'\r\n'
    if ref is not None:
        head += b'Referer: ' + ref + b'\r\n'
    if rid is not None:
        head += b'X-Request-Id: ' + rid + b'\r\n'
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    s.sendall(head + b'\r\n')
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    print(data.split(b'\r\n', 1)[0].decode('latin-1'))


for r in HOSTILE if which == 'hostile' else PLAIN:
    send(*r)
