# SPDX-License-Identifier: MIT
# A throwaway PostgreSQL for the database tests (sourced after test/e2e-lib.sh): initdb into a
# temporary folder, pg_ctl on a private unix socket there and 127.0.0.1 on a free port (never
# the system's service; as the postgres user when run as root), stopped on exit.
#   pg_setup || exit 0    prints a SKIP line (returns 1) when PostgreSQL is not installed, or
#                         not ok (returns 1) when it does not start; then PGBIN, PGDIR, PGPORT,
#                         pg_start, pg_stop MODE, psql ARGS... (as the superuser canal)
pg_setup() {
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
        ok "$(basename "$0" .sh) # SKIP PostgreSQL is not installed (make deps-test installs it)"
        return 1
    fi
    PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/canal-pg.XXXXXX")
    AS=""
    if [ "$(id -u)" = 0 ]; then
        # initdb and postgres refuse to run as root
        chown postgres "$PGDIR"
        AS="runuser -u postgres --"
    fi
    PGPORT=$(free_port)
    trap 'for p in $SERVER_PIDS; do kill -KILL "$p" 2>/dev/null; done; pg_stop immediate; rm -rf "$TMP" "$PGDIR"' EXIT
    if ! $AS "$PGBIN/initdb" -D "$PGDIR/data" -U canal --auth=trust -E UTF8 --locale=C.UTF-8 >"$TMP/initdb.log" 2>&1; then
        not_ok "initdb"
        sed 's/^/# /' "$TMP/initdb.log"
        return 1
    fi
    if ! pg_start; then
        not_ok "PostgreSQL started"
        sed 's/^/# /' "$PGDIR/log"
        return 1
    fi
}
pg_start() {
    $AS "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -t 30 \
        -o "-k $PGDIR -c listen_addresses=127.0.0.1 -p $PGPORT -c fsync=off -c max_connections=40" start >/dev/null
}
pg_stop() { [ -n "$PGDIR" ] && $AS "$PGBIN/pg_ctl" -D "$PGDIR/data" -m "$1" -w -t 30 stop >/dev/null 2>&1; }
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGDIR" -p "$PGPORT" -U canal "$@"; }
