#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# Forms and uploads through canal-testapp with real clients: curl --data-urlencode into
# /form (canal_req_form_all()), curl -F into /form and /upload (canal_multipart_next()),
# file bytes (CR, LF, NUL, lines that look like the boundary) back out unchanged, the part
# limit, malformed bodies, and a route's own body limit (/small, max_body 64) below the app's.
. test/e2e-lib.sh

start forms "$TBIN/canal-testapp" --threads 1 --max-body 200000 || exit 0

# urlencoded, as curl sends it (duplicates in order, '&' and '=' and UTF-8 inside values)
check "urlencoded fields, decoded, duplicates in order" \
    '[["a","hello world"],["b","x&y=z"],["a","é"],["empty",""]]' \
    "$(body "$URL/form" --data-urlencode 'a=hello world' --data-urlencode 'b=x&y=z' --data-urlencode 'a=é' \
        --data-urlencode 'empty=')"
check "a bad percent-escape: 400" 400 "$(status "$URL/form" --data 'a=1&b=%zz')"
check_match "a bad percent-escape: said so" '"status":400,"detail":"a bad percent-escape \(or %00\) in the form field at byte 4"' \
    "$(body "$URL/form" --data 'a=1&b=%zz')"
check "%00 in a form: 400" 400 "$(status "$URL/form" --data 'a=%00')"
check "another media type: 415" 415 "$(status "$URL/form" --data-binary 'a=1' -H 'content-type: text/plain')"

# multipart, as curl -F sends it: a binary file with CR LF, NUL and boundary-like lines
python3 -c '
import sys
sys.stdout.buffer.write(b"\x00\x01\r\n\r\n--\r\n--------------------------\r\n--XyZ\r\n--XyZ--\r\n" + bytes(range(256)) * 40 + b"\r\n")
' >"$TMP/file.bin"
check "curl -F: the fields only in the form" '[["title","Hello"],["empty",""],["title","again"]]' \
    "$(body "$URL/form" -F title=Hello -F 'file=@'"$TMP"'/file.bin;type=application/octet-stream' -F 'empty=' \
        -F title=again)"
check "curl -F: every part, files told from fields" \
    '[{"name":"title","filename":null,"type":"text/plain","size":5},{"name":"file","filename":"file.bin","type":"application/octet-stream","size":'"$(wc -c <"$TMP/file.bin" | tr -d ' ')"'}]' \
    "$(body "$URL/upload" -F title=Hello -F 'file=@'"$TMP"'/file.bin;type=application/octet-stream')"
curl -s -o "$TMP/back.bin" -F title=Hello -F "file=@$TMP/file.bin" "$URL/upload?part=1"
if cmp -s "$TMP/file.bin" "$TMP/back.bin"; then ok "the file's bytes come back unchanged"; else not_ok "the file's bytes come back unchanged"; fi

# a body with our own boundary: preamble, a file holding lines that start with the delimiter,
# the epilogue
python3 -c '
import sys
b = b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.bin\"\r\nContent-Type: application/x-thing\r\n\r\n"
b += b"\r\n--XyZX\r\n--XyZ junk\r\n--XyZ-\r\n\x00--XyZ--"
b += b"\r\n--XyZ\r\nContent-Disposition: form-data; name=\"g\"\r\n\r\nv\r\n--XyZ--\r\nepilogue\r\n--XyZ\r\n"
sys.stdout.buffer.write(b)
' >"$TMP/own.body"
check "boundary-like lines inside a file are data" \
    '[{"name":"f","filename":"x.bin","type":"application/x-thing","size":38},{"name":"g","filename":null,"type":"text/plain","size":1}]' \
    "$(body "$URL/upload" -H 'content-type: multipart/form-data; boundary="XyZ"' --data-binary @"$TMP/own.body")"

# errors and limits of multipart
parts=""
i=0
while [ $i -lt 129 ]; do parts="$parts -F f$i=v"; i=$((i + 1)); done
# shellcheck disable=SC2086
check "129 parts: 413" 413 "$(status "$URL/upload" $parts)"
# shellcheck disable=SC2086
check_match "129 parts: said so" 'more than 128 parts' "$(body "$URL/form" $parts)"
check "no closing delimiter: 400" 400 \
    "$(status "$URL/upload" -H 'content-type: multipart/form-data; boundary=XyZ' \
        --data-binary "$(printf -- '--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv')")"
check "no boundary: 400" 400 "$(status "$URL/upload" -H 'content-type: multipart/form-data' --data-binary x)"
check "a boundary of 71 characters: 400" 400 \
    "$(status "$URL/upload" -H "content-type: multipart/form-data; boundary=$(head -c 71 /dev/zero | tr '\0' a)" --data-binary x)"
python3 -c '
import sys
sys.stdout.buffer.write(b"--XyZ\r\nContent-Disposition: form-data; name=a\r\nX: " + b"x" * 9000 + b"\r\n\r\nv\r\n--XyZ--")
' >"$TMP/bighead.body"
check "a part header over 8 KiB: 413" 413 \
    "$(status "$URL/upload" -H 'content-type: multipart/form-data; boundary=XyZ' --data-binary @"$TMP/bighead.body")"

# a route's own body limit, below the app's
check "the route's limit: 64 bytes pass" 200 "$(status "$URL/small" --data "a=$(head -c 62 /dev/zero | tr '\0' b)")"
check "the route's limit: 65 bytes are a 413" 413 "$(status "$URL/small" --data "a=$(head -c 63 /dev/zero | tr '\0' b)")"
check "the route's 413 is problem details" "application/problem+json" \
    "$(header "$URL/small" content-type --data "a=$(head -c 63 /dev/zero | tr '\0' b)")"
check_match "the route's 413 says its limit" '"status":413,"detail":"the body is larger than this route.s limit of 64 bytes"' \
    "$(body "$URL/small" --data "a=$(head -c 63 /dev/zero | tr '\0' b)")"
check "another route takes the same body" 200 "$(status "$URL/form" --data "a=$(head -c 63 /dev/zero | tr '\0' b)")"
head -c 200001 /dev/zero | tr '\0' a >"$TMP/over"
check "the app's limit is still libh2o's 413" 413 "$(status "$URL/form" --data-binary @"$TMP/over")"

stop forms
