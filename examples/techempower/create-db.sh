#!/bin/sh
# SPDX-License-Identifier: MIT
# A throwaway PostgreSQL with TechEmpower's hello_world database (world.sql), for canal-tfb:
#
#   sh examples/techempower/create-db.sh start DIR   initdb into DIR (a new folder), start the
#                                                    server on a unix socket in DIR, fill it;
#                                                    prints the --db URL
#   sh examples/techempower/create-db.sh stop DIR    stop it (then rm -rf DIR)
#
# Never the system's service; no TCP port. As root, the server runs as the postgres user.
set -eu
cmd=${1:-}
dir=${2:-}
if [ -z "$dir" ] || { [ "$cmd" != start ] && [ "$cmd" != stop ]; }; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$PGBIN/initdb" ] || { echo "$0: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
AS=""
[ "$(id -u)" = 0 ] && AS="runuser -u postgres --"
if [ "$cmd" = stop ]; then
    $AS "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    exit 0
fi
mkdir "$dir"
dir=$(cd "$dir" && pwd)
[ -n "$AS" ] && chown postgres "$dir"
$AS "$PGBIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
$AS "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
    -o "-k $dir -c listen_addresses= -c max_connections=200 -c synchronous_commit=off" start >/dev/null
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres -d postgres -f "$(dirname "$0")/world.sql"
echo "postgresql://benchmarkdbuser:benchmarkdbpass@/hello_world?host=$dir"
