#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# Hostile input, from raw sockets: canal-probe (test/e2e/probe.c) runs the table of cases in
# test/e2e/probe.cases against the demo app in both modes (one TAP line per case), then the
# error-page cases of test/e2e/probe-dev.cases against the test app in development mode.
. test/e2e-lib.sh

for mode in router controller; do
    echo "# canal-demo --mode $mode"
    # a short header timeout: the case of a request line of spaces ends in its 408, not in 10 s
    start "demo-$mode" "$BIN/canal-demo" --mode $mode --threads 1 --header-timeout 2000 || exit 0
    "$TBIN/canal-probe" --mode $mode "$PORT" test/e2e/probe.cases | sed "s/^\(\(not \)*ok - probe: \)/\1$mode: /"
    stop "demo-$mode"
done

echo "# canal-testapp --env development"
start dev "$TBIN/canal-testapp" --threads 1 --env development || exit 0
"$TBIN/canal-probe" --sync /query '[]' "$PORT" test/e2e/probe-dev.cases | sed 's/^\(\(not \)*ok - probe: \)/\1dev: /'
stop dev
