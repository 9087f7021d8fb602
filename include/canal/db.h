/* SPDX-License-Identifier: MIT */
/**
 * @file canal/db.h
 * An asynchronous database client: PostgreSQL through libpq's non-blocking API on the worker
 * loops, in pipeline mode, with a pool of connections on every worker; or SQLite, on threads
 * of its own. The same handler code runs on both.
 *
 *     canal_app_db(app, "postgresql:///hello_world?host=/run/postgresql", NULL, NULL);
 *     canal_db_prepare(app, "world", "SELECT id, randomnumber FROM world WHERE id = $1", NULL);
 *
 *     static void got(canal_req_t *req, const canal_db_result_t *res, void *data)
 *     {
 *         world_t w;
 *         if (canal_db_failed(req, res))            // 503 or 500 problem set: done
 *             return;
 *         if (canal_db_rows(res) == 0)
 *             canal_res_problem(req, 404, "no such world");
 *         else if (canal_db_bind(res, 0, &world_schema, &w) == 0)
 *             canal_res_model(req, 200, &world_schema, &w);
 *     }
 *
 *     static int one(canal_req_t *req, void *data)
 *     {
 *         canal_db_param_t id = CANAL_DB_INT(42);
 *         return canal_db_query(req, "world", &id, 1, got, NULL);    // CANAL_PENDING
 *     }
 *
 * The query runs on a connection of the request's own worker; its callback runs on that
 * worker's thread, with the request, once the rows are back. A request may start several
 * queries (they are pipelined on the worker's connections) and from a callback start more;
 * its answer is committed once none of its queries is left in flight and the callbacks (and
 * canal_db_then()'s) have run. A callback never runs for a request that is gone
 * (request_timeout_ms answered 504, or libh2o ended it because its client left; over HTTP/1.1
 * libh2o does not read a connection while its request is handled, so it sees a client gone only
 * when it writes the answer): its result is dropped, and a query still waiting for a
 * connection is never sent. A PostgreSQL query already sent is cancelled on the server when
 * that is safe: when it is the only query in flight on its connection, outside a transaction
 * (a cancel stops whatever the server runs at that moment, which on a pipelined connection
 * may be another request's query). PQcancel() blocks, so it runs on the offload pool (none:
 * no cancel), and the connection takes no other query until it is back; the cancel requests
 * are counted in /metrics (canal_db_cancels_total). Other PostgreSQL queries run to their
 * end. On SQLite, a statement of the gone request that a thread is running is interrupted
 * (sqlite3_interrupt(), counted the same way), and one still queued is never run.
 *
 * Parameters are always bound (never spliced into the SQL); the one way to run SQL text
 * without parameters is canal_db_exec_script(), meant for DDL and migrations at start.
 *
 * PostgreSQL's connections: each worker keeps pool_size of them, connected when the worker starts and
 * again, with a backoff, whenever one is lost; every declared statement is prepared on each
 * connection when it connects. A query with no connection ready waits at most wait_ms in a
 * queue of max_waiting per worker: then (or when the queue is full) it fails as
 * "unavailable", which canal_db_failed() answers 503 with Retry-After. Queries in flight on a
 * connection that is lost fail the same way.
 *
 * SQLite (sqlite:PATH, sqlite::memory:): pool_size threads of the app's, each with its own
 * connection (WAL, a busy timeout), take the queries of every worker from one queue (at most
 * max_waiting); statements that write run one at a time, under canal's lock. Parameters are
 * written $1, $2 as for PostgreSQL; values come back as text, blobs as "\x" and hex as
 * PostgreSQL's bytea, and errors carry PostgreSQL's SQLSTATE for the common cases (23505 a
 * unique constraint, 23502 NOT NULL, 42601 syntax, 08P01 a wrong parameter count; HY000 the
 * others). A transaction runs on one SQLite thread's connection, which BEGIN (IMMEDIATE) takes
 * with canal's write lock and holds to COMMIT or ROLLBACK, serving that transaction alone
 * meanwhile: transactions and writes take turns, never refused as locked. As on PostgreSQL, a
 * statement after a failed one fails (25P02) and a COMMIT after it rolls back. Inside a
 * transaction, send the request's statements with canal_db_tx_query(); a canal_db_query() of
 * the same request meanwhile runs in the transaction too, on its connection (a rollback undoes
 * its write), never waiting for a connection the transaction holds. A query of a request with
 * a transaction is never interrupted when the request goes; its transaction is rolled back.
 */
#ifndef CANAL_DB_H
#define CANAL_DB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "error.h"
#include "router.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A query's result, borrowed by its callback for the time of the call. */
typedef struct canal_db_result canal_db_result_t;

/** The client's settings; a zeroed struct (or NULL) means the defaults. */
typedef struct canal_db_options {
    unsigned pool_size;    /**< connections per worker (default 2) */
    unsigned max_pipeline; /**< queries in flight on one connection (default 64) */
    unsigned max_waiting;  /**< queries waiting for a connection, per worker (default 1024) */
    unsigned wait_ms;      /**< how long a query waits for a connection (default 1000) */
    unsigned slow_ms;      /**< queries slower than this are logged (warn, with the
                                statement's name and time, never the values); 0: never */
} canal_db_options_t;

/** A parameter's kind (canal_db_param_t). */
typedef enum canal_db_kind {
    CANAL_DB_P_NULL = 0, /**< SQL NULL */
    CANAL_DB_P_TEXT,     /**< text: s, len bytes */
    CANAL_DB_P_INT,      /**< an integer: i */
    CANAL_DB_P_DOUBLE,   /**< a double: d */
    CANAL_DB_P_BOOL,     /**< a boolean: i (0 or not) */
    CANAL_DB_P_BYTEA     /**< bytes: s, len bytes (sent in binary) */
} canal_db_kind_t;

/** A query parameter ($1, $2...): made with the macros below. Borrowed by the call that
 * takes it (its bytes are copied before it returns). */
typedef struct canal_db_param {
    canal_db_kind_t kind; /**< what it is */
    int64_t i;            /**< INT's value, BOOL's (0 or not) */
    double d;             /**< DOUBLE's value */
    const char *s;        /**< TEXT's and BYTEA's bytes */
    size_t len;           /**< their length */
} canal_db_param_t;

/** A NULL parameter. */
#define CANAL_DB_NULL ((canal_db_param_t){.kind = CANAL_DB_P_NULL})
/** An integer parameter (int2, int4 or int8 columns). */
#define CANAL_DB_INT(v) ((canal_db_param_t){.kind = CANAL_DB_P_INT, .i = (int64_t)(v)})
/** A double parameter. */
#define CANAL_DB_DOUBLE(v) ((canal_db_param_t){.kind = CANAL_DB_P_DOUBLE, .d = (v)})
/** A boolean parameter. */
#define CANAL_DB_BOOL(v) ((canal_db_param_t){.kind = CANAL_DB_P_BOOL, .i = !!(v)})
/** A text parameter: a NUL-terminated string (NULL: SQL NULL). */
#define CANAL_DB_TEXT(str) \
    ((canal_db_param_t){.kind = (str) ? CANAL_DB_P_TEXT : CANAL_DB_P_NULL, .s = (str), \
                        .len = strlen((str) ? (str) : "")})
/** A text parameter of len bytes. */
#define CANAL_DB_TEXTN(str, n) ((canal_db_param_t){.kind = CANAL_DB_P_TEXT, .s = (str), .len = (n)})
/** A bytea parameter of len bytes. */
#define CANAL_DB_BYTEA(p, n) ((canal_db_param_t){.kind = CANAL_DB_P_BYTEA, .s = (const char *)(p), .len = (n)})

/** A query's callback: on the request's thread, req alive (never NULL), res borrowed for the
 * call. It sets the answer, or starts more queries. */
typedef void (*canal_db_fn)(canal_req_t *req, const canal_db_result_t *res, void *data);

/**
 * Switches the database client on: url is "postgresql://..." or "postgres://..." or a libpq
 * conninfo string ("host=/tmp dbname=x"), or "sqlite:PATH" or "sqlite::memory:"; opt may be
 * NULL. One client per app; before canal_app_start(). The URL is checked here (CANAL_EINVAL
 * with err saying why); PostgreSQL's connections are made by the workers, a SQLite file is
 * opened (and created) here.
 * Errors are also sticky on the app (canal_app_error()). Returns 0, CANAL_EINVAL,
 * CANAL_EEXIST (a client already), CANAL_ENOMEM, CANAL_ESTATE (started).
 */
CANAL_API int canal_app_db(canal_app_t *app, const char *url, const canal_db_options_t *opt,
                           canal_error_info_t *err);

/**
 * Declares a prepared statement: name (for canal_db_query()) and its SQL with $1, $2...
 * placeholders, prepared on every connection when it connects. Before canal_app_start(),
 * after canal_app_db(). Returns 0, CANAL_EINVAL (empty name or SQL), CANAL_EEXIST,
 * CANAL_ESTATE (no client, or started), CANAL_ENOMEM.
 */
CANAL_API int canal_db_prepare(canal_app_t *app, const char *name, const char *sql, canal_error_info_t *err);

/**
 * Runs SQL text without parameters (several statements allowed), blocking, on a connection of
 * its own, before canal_app_start(): for DDL and migrations only. Returns 0, or CANAL_ESYS
 * with err saying what the server said, CANAL_ESTATE (no client, or started); a failure is
 * also the app's registration error, so canal_app_start() refuses to start without its schema.
 */
CANAL_API int canal_db_exec_script(canal_app_t *app, const char *sql, canal_error_info_t *err);

/**
 * Starts the prepared statement name with n parameters on one of the worker's connections;
 * fn (may be NULL) gets the result. The request is deferred on the first query (it must not
 * be deferred otherwise). Returns CANAL_PENDING, which the handler returns. When it cannot
 * start the query (an unknown statement, out of memory, the request deferred by other code)
 * it sets a 500 (a 503 with Retry-After while the server stops) and returns 0, and fn does
 * not run. A query that cannot get a connection in time still returns CANAL_PENDING: fn gets
 * the failure (canal_db_unavailable()).
 */
CANAL_API int canal_db_query(canal_req_t *req, const char *name, const canal_db_param_t *params, size_t n,
                             canal_db_fn fn, void *data);

/**
 * The same with SQL text instead of a prepared statement: sql has one statement, its values
 * bound from params ($1, $2...), never spliced in. For statements built at run time (an
 * UPDATE of N rows); prefer canal_db_prepare() for the others.
 */
CANAL_API int canal_db_query_sql(canal_req_t *req, const char *sql, const canal_db_param_t *params, size_t n,
                                 canal_db_fn fn, void *data);

/** A transaction: statements on one connection held for it (canal_db_begin()). */
typedef struct canal_db_tx canal_db_tx_t;

/**
 * Begins a transaction: BEGIN on a connection of the worker's that is then held for it
 * (no other query goes to it) until canal_db_commit() or canal_db_rollback() is back. fn gets
 * BEGIN's result (with canal_db_error() set if it failed: then there is no transaction). The
 * transaction's statements are started from fn or later, with canal_db_tx_query(); a
 * transaction still open when the request's last query is back (a handler that failed, a
 * client gone) is rolled back and its connection returned clean. One transaction at a time per
 * request. On both backends (SQLite: see the top of this file). Returns the transaction (valid until the request's answer is committed) and defers
 * the request as canal_db_query() does; NULL with a 500 set when it cannot start it.
 */
CANAL_API canal_db_tx_t *canal_db_begin(canal_req_t *req, canal_db_fn fn, void *data);

/**
 * Runs the prepared statement name (or, with canal_db_tx_query_sql(), SQL text with bound
 * parameters) in the transaction, as canal_db_query() does. Once the transaction has ended, or
 * its connection was lost, the query fails (unavailable for a lost connection). Returns
 * CANAL_PENDING, or 0 with a 500 set (an unknown statement, BEGIN not back yet).
 */
CANAL_API int canal_db_tx_query(canal_db_tx_t *tx, const char *name, const canal_db_param_t *params, size_t n,
                                canal_db_fn fn, void *data);
/** canal_db_tx_query() with SQL text (one statement, parameters bound). */
CANAL_API int canal_db_tx_query_sql(canal_db_tx_t *tx, const char *sql, const canal_db_param_t *params, size_t n,
                                    canal_db_fn fn, void *data);

/**
 * Ends the transaction with COMMIT (or ROLLBACK), fn (may be NULL) getting its result; the
 * connection goes back to the pool when it is back. A COMMIT after a failed statement gives a
 * ROLLBACK's result (PostgreSQL's rule). Returns CANAL_PENDING, or 0 with a 500 set (ended
 * already, or BEGIN not back yet).
 */
CANAL_API int canal_db_commit(canal_db_tx_t *tx, canal_db_fn fn, void *data);
/** Ends the transaction with ROLLBACK: as canal_db_commit(). */
CANAL_API int canal_db_rollback(canal_db_tx_t *tx, canal_db_fn fn, void *data);

/**
 * Runs fn(req, data) once every query of the request is back and its callback has run (at
 * once, later, if none is in flight when the last callback returns): the place to answer
 * after several queries at once. One per request (a later call replaces it); it may start
 * more queries, and is then called again when those are back only if set again. Returns 0,
 * or CANAL_ESTATE when the request has no query in flight.
 */
CANAL_API int canal_db_then(canal_req_t *req, void (*fn)(canal_req_t *req, void *data), void *data);

/**
 * A readiness check for canal_app_health() (its canal_ready_fn): 1 while at least one
 * database connection is connected (on any worker), else 0; also 1 when the app has no
 * client. canal_app_health(app, "/health", canal_db_ready, NULL).
 */
CANAL_API int canal_db_ready(canal_app_t *app, void *data);

/** The query failed: the server's primary message (no DETAIL, which may quote values), or
 * canal's ("the database connection was lost"); NULL when it did not fail. */
CANAL_API const char *canal_db_error(const canal_db_result_t *res);

/** The failed query's SQLSTATE ("23505", "42601"...), "08006" for a lost connection and
 * "08001" for none in time; "" when it did not fail. */
CANAL_API const char *canal_db_sqlstate(const canal_db_result_t *res);

/** 1 when the query failed because the database could not be reached (no connection in time,
 * a connection lost, the server shutting down): worth retrying later. */
CANAL_API int canal_db_unavailable(const canal_db_result_t *res);

/**
 * The default answer to a failed query: if res failed, sets a 503 problem with Retry-After: 1
 * (canal_db_unavailable()), or a 500 (logged with the server's message, which the client
 * does not see), and returns 1; else returns 0.
 */
CANAL_API int canal_db_failed(canal_req_t *req, const canal_db_result_t *res);

/** The number of rows (0 for a command, or a failure). */
CANAL_API size_t canal_db_rows(const canal_db_result_t *res);
/** The number of columns. */
CANAL_API size_t canal_db_cols(const canal_db_result_t *res);
/** Column col's name, or NULL out of range. */
CANAL_API const char *canal_db_col_name(const canal_db_result_t *res, size_t col);
/** The rows a command changed (UPDATE, INSERT, DELETE), 0 for others. */
CANAL_API int64_t canal_db_affected(const canal_db_result_t *res);

/** 1 when the value at (row, col) is NULL or out of range. */
CANAL_API int canal_db_is_null(const canal_db_result_t *res, size_t row, size_t col);

/**
 * The typed readers of the value at (row, col). Each returns 0 with *out set; CANAL_ENOTFOUND
 * for NULL (or a row or column out of range), *out untouched; CANAL_ETYPE when the value is not
 * of that type (text "abc" read as an integer), CANAL_ERANGE when it does not fit.
 * timestamp: microseconds since 1970-01-01 UTC (timestamp and timestamptz; a timestamp
 * without zone is taken as UTC). text: the bytes, borrowed from the result (valid in the
 * callback only). bytea: the bytes, decoded into request memory.
 */
CANAL_API int canal_db_int32(const canal_db_result_t *res, size_t row, size_t col, int32_t *out);
/** An int8 (or smaller) value; as canal_db_int32(). */
CANAL_API int canal_db_int64(const canal_db_result_t *res, size_t row, size_t col, int64_t *out);
/** A float8, float4 or numeric value (NaN and infinities too); as canal_db_int32(). */
CANAL_API int canal_db_double(const canal_db_result_t *res, size_t row, size_t col, double *out);
/** A boolean (PostgreSQL's t and f, SQLite's 1 and 0) as 1 or 0; as canal_db_int32(). */
CANAL_API int canal_db_bool(const canal_db_result_t *res, size_t row, size_t col, int *out);
/** Any value's text, borrowed from the result (the callback's time only); as canal_db_int32(). */
CANAL_API int canal_db_text(const canal_db_result_t *res, size_t row, size_t col, canal_str_t *out);
/** A bytea (SQLite: a blob), decoded into request memory; as canal_db_int32(). */
CANAL_API int canal_db_bytea(const canal_db_result_t *res, size_t row, size_t col, canal_str_t *out);
/** A timestamp or timestamptz as microseconds since 1970-01-01 UTC; as canal_db_int32(). */
CANAL_API int canal_db_timestamp(const canal_db_result_t *res, size_t row, size_t col, int64_t *out);

/**
 * Binds row into *out, a struct of schema->size bytes (zeroed first), through the typed
 * models' table (canal/schema.h): each field takes the column of its name (a field with no
 * such column, or a NULL, is left zero, and its CANAL_PRESENT() member 0). Types: INT32,
 * INT64, DOUBLE, BOOL, STRING and CSTRING (copied into request memory). The struct is then
 * written by canal_res_model() like any model. Returns 0, CANAL_ETYPE (a value that does not
 * parse as its field's type), CANAL_EINVAL (a field type rows cannot fill), CANAL_ENOTFOUND
 * (no such row).
 */
CANAL_API int canal_db_bind(const canal_db_result_t *res, size_t row, const canal_schema_t *schema, void *out);

#ifdef __cplusplus
}
#endif

#endif
