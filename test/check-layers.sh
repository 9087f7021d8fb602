#!/bin/sh
# SPDX-License-Identifier: MIT
# The layering of the library's folders, read from its objects' symbols (test/layers.py):
# the core names no feature, a feature uses only the core and the features below it, the
# controller layer and the test client only exported calls.
#   sh test/check-layers.sh [BUILD]      (BUILD: build, build/asan...)
# needs: python3 nm
cd "$(dirname "$0")/.." || exit 1
exec python3 test/layers.py "${1:-build}"
