/* SPDX-License-Identifier: MIT */
/*
 * The database client's test app (test/e2e/db.sh on PostgreSQL, db-sqlite.sh on SQLite): every
 * column type, NULLs, rows bound through a schema, errors (syntax, constraint, wrong parameter
 * count), several queries of one request with a failing one in the middle, chaining,
 * transactions, slow queries for the deadline, the client gone and the pool's wait queue, a
 * controller action (its after-filter at the deferred commit), the metrics and readiness.
 *
 *   canal-dbapp --db URL [--pool N] [--pipeline N] [--wait-ms N] [--max-waiting N]
 *               [--slow-ms N] [canal's flags]
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>

typedef struct {
    int32_t id;
    canal_str_t name;
    double price;
    bool active;
    int64_t stock;
    bool has_stock;
} item_t;

static const canal_field_t item_fields[] = {
    {.name = "id", CANAL_FIELD(item_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "name", CANAL_FIELD(item_t, name), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED},
    {.name = "price", CANAL_FIELD(item_t, price), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_REQUIRED},
    {.name = "active", CANAL_FIELD(item_t, active), .type = CANAL_TYPE_BOOL, .flags = CANAL_REQUIRED},
    {.name = "stock", CANAL_FIELD(item_t, stock), .type = CANAL_TYPE_INT64, CANAL_PRESENT(item_t, has_stock),
     .flags = CANAL_NULLABLE},
    {.name = NULL}};
static const canal_schema_t item_schema = {.name = "Item", .size = sizeof(item_t), .fields = item_fields};

/* ---- every type ---- */

static void types_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    if (canal_db_failed(req, res))
        return;
    int32_t i4 = 0;
    int64_t i8 = 0, ts = 0, big = 0;
    double d = 0;
    int b = 0;
    canal_str_t t = {0}, by = {0};
    int rc[7] = {canal_db_int32(res, 0, 0, &i4), canal_db_int64(res, 0, 1, &i8), canal_db_double(res, 0, 2, &d),
                 canal_db_bool(res, 0, 3, &b), canal_db_text(res, 0, 4, &t), canal_db_bytea(res, 0, 5, &by),
                 canal_db_timestamp(res, 0, 6, &ts)};
    /* the NULL column: ENOTFOUND and i4 untouched; the int8 column read as int32: ERANGE;
     * the text column read as an integer: ETYPE */
    int null_rc = canal_db_int32(res, 0, 7, &i4);
    int32_t small = 0;
    int range_rc = canal_db_int32(res, 0, 8, &small);
    int type_rc = canal_db_int64(res, 0, 4, &big);
    char hex[64] = "";
    for (size_t i = 0; i < by.len && i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)by.base[i]);
    canal_res_json_new(req, 200,
                       json_pack("{s:i, s:I, s:f, s:b, s:s%, s:s, s:I, s:b, s:i, s:i, s:i, s:i, s:i, s:s, s:b}",
                                 "int4", i4, "int8", (json_int_t)i8, "float8", d, "bool", b, "text", t.base, t.len,
                                 "bytea", hex, "timestamptz", (json_int_t)ts, "null_is_null",
                                 canal_db_is_null(res, 0, 7), "null_rc", null_rc, "range_rc", range_rc, "type_rc",
                                 type_rc, "rows", (int)canal_db_rows(res), "cols", (int)canal_db_cols(res),
                                 "col5", canal_db_col_name(res, 5), "readers_ok",
                                 rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && rc[3] == 0 && rc[4] == 0 && rc[5] == 0 &&
                                     rc[6] == 0));
}

static int types(canal_req_t *req, void *data)
{
    return canal_db_query(req, "types", NULL, 0, types_done, NULL);
}

/* ---- rows through a schema ---- */

static void item_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    item_t it;
    if (canal_db_failed(req, res))
        return;
    if (canal_db_rows(res) == 0)
        canal_res_problem(req, 404, "no such item");
    else if (canal_db_bind(res, 0, &item_schema, &it) != 0)
        canal_req_fail(req, "bind failed");
    else
        canal_res_model(req, 200, &item_schema, &it);
}

static int item(canal_req_t *req, void *data)
{
    int32_t id = 0;
    canal_req_param_int32(req, "id", &id);
    canal_db_param_t p = CANAL_DB_INT(id);
    return canal_db_query(req, "item", &p, 1, item_done, NULL);
}

static void items_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    if (canal_db_failed(req, res))
        return;
    size_t n = canal_db_rows(res);
    item_t *all = canal_req_alloc(req, (n ? n : 1) * sizeof(*all));
    for (size_t i = 0; i < n; i++)
        if (canal_db_bind(res, i, &item_schema, &all[i]) != 0) {
            canal_req_fail(req, "bind failed");
            return;
        }
    canal_res_model_array(req, 200, &item_schema, all, n);
}

static int items(canal_req_t *req, void *data)
{
    return canal_db_query_sql(req, "SELECT * FROM items ORDER BY id", NULL, 0, items_done, NULL);
}

/* POST /items?name=&price=: 201, or 409 for a name taken (unique constraint) */
static void insert_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    if (canal_db_error(res) != NULL && strcmp(canal_db_sqlstate(res), "23505") == 0) {
        canal_res_problem(req, 409, "that name is taken");
        return;
    }
    if (canal_db_failed(req, res))
        return;
    int32_t id = 0;
    canal_db_int32(res, 0, 0, &id);
    canal_res_json_new(req, 201, json_pack("{s:i, s:I}", "id", id, "affected", (json_int_t)canal_db_affected(res)));
}

static int insert(canal_req_t *req, void *data)
{
    canal_str_t name = {0}, price = {0};
    canal_req_query(req, "name", &name);
    canal_req_query(req, "price", &price);
    canal_db_param_t p[2] = {CANAL_DB_TEXTN(name.base, name.len), CANAL_DB_TEXTN(price.base, price.len)};
    if (name.base == NULL)
        p[0] = CANAL_DB_NULL;
    if (price.base == NULL)
        p[1] = CANAL_DB_NULL;
    return canal_db_query(req, "insert", p, 2, insert_done, NULL);
}

/* ---- errors, reported as they come ---- */

static void error_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    canal_res_json_new(req, 200, json_pack("{s:s?, s:s, s:b}", "error", canal_db_error(res), "sqlstate",
                                           canal_db_sqlstate(res), "unavailable", canal_db_unavailable(res)));
}

static int syntax(canal_req_t *req, void *data)
{
    return canal_db_query_sql(req, "SELEC 1", NULL, 0, error_done, NULL);
}

static int wrong_params(canal_req_t *req, void *data)
{
    canal_db_param_t p[2] = {CANAL_DB_INT(1), CANAL_DB_INT(2)};
    return canal_db_query(req, "item", p, 2, error_done, NULL);
}

static int bad_param(canal_req_t *req, void *data)
{
    canal_db_param_t p = CANAL_DB_TEXT("not a number");
    return canal_db_query(req, "item", &p, 1, error_done, NULL);
}

static int unknown_stmt(canal_req_t *req, void *data)
{
    return canal_db_query(req, "nope", NULL, 0, error_done, NULL);
}

/* ---- several queries of one request ---- */

/* one query's outcome, in request memory (which lives as long as any callback can run) */
struct slot {
    int64_t value;
    const char *sqlstate; /* NULL: it worked */
};

struct many {
    size_t n;
    struct slot *slots;
};

static void slot_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct slot *s = data;
    if (canal_db_error(res) != NULL)
        s->sqlstate = canal_req_printf(req, "%s", canal_db_sqlstate(res));
    else
        canal_db_int64(res, 0, 0, &s->value);
}

static void all_back(canal_req_t *req, void *data)
{
    struct many *m = data;
    json_t *arr = json_array();
    for (size_t i = 0; i < m->n; i++)
        json_array_append_new(arr, m->slots[i].sqlstate ? json_pack("{s:s}", "error", m->slots[i].sqlstate)
                                                        : json_pack("{s:I}", "value", (json_int_t)m->slots[i].value));
    canal_res_json_new(req, 200, arr);
}

/* /pipeline?n=N&fail=K: N queries at once (SELECT $1 * 10), the K-th one failing (a division
 * by zero); the answer once all are back, in the order they were started */
static int pipeline(canal_req_t *req, void *data)
{
    int64_t n = 3, fail = -1;
    canal_req_query_int64(req, "n", &n);
    canal_req_query_int64(req, "fail", &fail);
    if (n < 1 || n > 500)
        return canal_res_problem(req, 400, "n: 1 to 500");
    struct many *m = canal_req_alloc(req, sizeof(*m));
    m->n = (size_t)n;
    m->slots = canal_req_alloc(req, m->n * sizeof(*m->slots));
    memset(m->slots, 0, m->n * sizeof(*m->slots));
    for (int64_t i = 0; i < n; i++) {
        canal_db_param_t p = CANAL_DB_INT(i);
        int rc = canal_db_query(req, i == fail ? "divide" : "times10", &p, 1, slot_done, &m->slots[i]);
        if (rc != CANAL_PENDING)
            return rc;
    }
    canal_db_then(req, all_back, m);
    return CANAL_PENDING;
}

/* /chain: a query, and from its callback a second one that uses the first's value */
static void chain_second(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    int64_t v = 0;
    if (canal_db_failed(req, res))
        return;
    canal_db_int64(res, 0, 0, &v);
    canal_res_json_new(req, 200, json_pack("{s:I}", "chained", (json_int_t)v));
}

static void chain_first(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    int64_t v = 0;
    if (canal_db_failed(req, res))
        return;
    canal_db_int64(res, 0, 0, &v);
    canal_db_param_t p = CANAL_DB_INT(v);
    canal_db_query(req, "times10", &p, 1, chain_second, NULL);
}

static int chain(canal_req_t *req, void *data)
{
    canal_db_param_t p = CANAL_DB_INT(7);
    return canal_db_query(req, "times10", &p, 1, chain_first, NULL);
}

/* /sleep?ms=N: a query that takes N ms on the server; /sleep/callbacks: how many of their
 * callbacks ran (none may run for a request that is gone) */
static atomic_int sleep_callbacks;

static void sleep_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    atomic_fetch_add(&sleep_callbacks, 1);
    if (canal_db_failed(req, res))
        return;
    canal_res_text(req, 200, "slept");
}

static int sleep_count(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, canal_req_printf(req, "%d", atomic_load(&sleep_callbacks)));
}

static int sleep_q(canal_req_t *req, void *data)
{
    int64_t ms = 100;
    canal_req_query_int64(req, "ms", &ms);
    canal_db_param_t p = CANAL_DB_DOUBLE((double)ms / 1000);
    return canal_db_query(req, "sleep", &p, 1, sleep_done, NULL);
}

/* /echo?v=TEXT: a value that goes to the server and back (parameters are bound, not spliced) */
static void echo_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    canal_str_t t = {0};
    if (canal_db_failed(req, res))
        return;
    canal_db_text(res, 0, 0, &t);
    canal_res_body(req, 200, "text/plain", t.base, t.len);
}

static int echo(canal_req_t *req, void *data)
{
    canal_str_t v = {0};
    canal_req_query(req, "v", &v);
    canal_db_param_t p = CANAL_DB_TEXTN(v.base ? v.base : "", v.len);
    return canal_db_query_sql(req, "SELECT $1::text", &p, 1, echo_done, NULL);
}

/* ---- transactions: POST /tx?name=N&mode=commit|rollback|fail|failcommit|open|select|plain ----
 * each inserts the row name, then: commits; rolls back; inserts a duplicate (which fails) and
 * answers with the transaction open; the same then commits (PostgreSQL's rule: a rollback);
 * answers with it open; reads its own row back (count, seen only inside) and commits; counts
 * it with a plain canal_db_query() (which runs in the transaction: 1) and commits */

struct txn {
    canal_db_tx_t *tx;
    canal_str_t name, mode;
};

static int is(canal_str_t s, const char *v)
{
    return s.len == strlen(v) && memcmp(s.base, v, s.len) == 0;
}

static void tx_ended(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct txn *t = data;
    if (!canal_db_failed(req, res))
        canal_res_text(req, is(t->mode, "commit") ? 201 : 200, is(t->mode, "commit") ? "committed" : "rolled back");
}

static void tx_after_failure(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    if (!canal_db_failed(req, res))
        canal_res_text(req, 200, "commit after a failure");
}

static void tx_counted(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct txn *t = data;
    int64_t n = -1;
    if (canal_db_failed(req, res))
        return;
    canal_db_int64(res, 0, 0, &n);
    canal_res_text(req, 200, canal_req_printf(req, "%lld", (long long)n));
    canal_db_commit(t->tx, NULL, NULL);
}

static void tx_second(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct txn *t = data;
    if (is(t->mode, "failcommit")) {
        canal_db_commit(t->tx, tx_after_failure, t);
        return;
    }
    /* the duplicate failed: answer and leave the transaction open; canal rolls it back */
    if (canal_db_error(res) != NULL)
        canal_res_problem(req, 409, "that name is taken (SQLSTATE %s)", canal_db_sqlstate(res));
    else
        canal_res_text(req, 200, "unexpected");
}

static void tx_first(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct txn *t = data;
    if (canal_db_failed(req, res))
        return;
    if (is(t->mode, "commit")) {
        canal_db_commit(t->tx, tx_ended, t);
    } else if (is(t->mode, "rollback")) {
        canal_db_rollback(t->tx, tx_ended, t);
    } else if (is(t->mode, "select")) {
        canal_db_param_t p = CANAL_DB_TEXTN(t->name.base, t->name.len);
        canal_db_tx_query_sql(t->tx, "SELECT count(*) FROM items WHERE name = $1", &p, 1, tx_counted, t);
    } else if (is(t->mode, "plain")) {
        canal_db_param_t p = CANAL_DB_TEXTN(t->name.base, t->name.len);
        canal_db_query_sql(req, "SELECT count(*) FROM items WHERE name = $1", &p, 1, tx_counted, t);
    } else if (is(t->mode, "fail") || is(t->mode, "failcommit")) {
        canal_db_param_t p[2] = {CANAL_DB_TEXT("apple"), CANAL_DB_DOUBLE(1)};
        canal_db_tx_query(t->tx, "insert", p, 2, tx_second, t);
    } else {
        canal_res_text(req, 200, "left open");
    }
}

static void tx_begun(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct txn *t = data;
    if (canal_db_failed(req, res))
        return;
    canal_db_param_t p[2] = {CANAL_DB_TEXTN(t->name.base, t->name.len), CANAL_DB_DOUBLE(9.5)};
    canal_db_tx_query(t->tx, "insert", p, 2, tx_first, t);
}

static int txn(canal_req_t *req, void *data)
{
    struct txn *t = canal_req_alloc(req, sizeof(*t));
    *t = (struct txn){0};
    canal_req_query(req, "name", &t->name);
    canal_req_query(req, "mode", &t->mode);
    if (t->name.base == NULL || t->mode.base == NULL)
        return canal_res_problem(req, 400, "name and mode");
    t->tx = canal_db_begin(req, tx_begun, t);
    return t->tx != NULL ? CANAL_PENDING : 0;
}

/* ---- a controller action: the same query, the after-filter at the deferred commit ---- */

typedef struct {
    int32_t id;
} id_args_t;

static const canal_field_t id_fields[] = {
    {.name = "id", CANAL_FIELD(id_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t id_args = {.name = "IdArgs", .size = sizeof(id_args_t), .fields = id_fields};

static int item_action(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_db_param_t p = CANAL_DB_INT(((const id_args_t *)args)->id);
    return canal_db_query(req, "item", &p, 1, item_done, NULL);
}

static int after_filter(canal_ctx_t *ctx, void *data)
{
    canal_req_t *req = canal_ctx_req(ctx);
    return canal_res_header(req, "x-after-filter", canal_req_printf(req, "%d", canal_res_status_code(req)));
}

static const canal_action_def_t item_actions[] = {
    {.name = "Get", .handler = item_action, .routes = {"mvc/items/{id:int}"}, .args = &id_args,
     .filters = {{.after = after_filter}}},
    {.name = NULL}};

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/plain", "Hello, World!", 13);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1;
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-dbapp: %s\n", err.message);
        return 2;
    }
    const char *url = NULL;
    canal_db_options_t opt = {0};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--db") == 0)
            url = argv[i + 1];
        else if (strcmp(argv[i], "--pool") == 0)
            opt.pool_size = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--pipeline") == 0)
            opt.max_pipeline = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--wait-ms") == 0)
            opt.wait_ms = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--max-waiting") == 0)
            opt.max_waiting = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--slow-ms") == 0)
            opt.slow_ms = (unsigned)atoi(argv[i + 1]);
        else {
            fprintf(stderr, "canal-dbapp: unknown flag %s\n", argv[i]);
            return 2;
        }
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_app_db(app, url, &opt, NULL);
    if (url != NULL && strncmp(url, "sqlite:", 7) == 0) {
        /* the same handlers on SQLite: its dialect, and the schema made by a migration */
        canal_db_exec_script(app,
                             "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,"
                             " price REAL NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 1, stock INTEGER);"
                             "INSERT OR IGNORE INTO items (id, name, price, active, stock) VALUES"
                             " (1, 'apple', 0.5, 1, 12), (2, 'pear', 1.25, 0, NULL);",
                             NULL);
        canal_db_prepare(app, "types",
                         "SELECT 42, 9000000000, 1.5, 1, 'h\u00e9llo' AS t, x'00ff41' AS raw, "
                         "'2026-12-03 14:27:11.5', NULL, 2147483648",
                         NULL);
        canal_db_prepare(app, "times10", "SELECT $1 * 10", NULL);
        canal_db_prepare(app, "divide", "SELECT json('not json' || $1)", NULL);
        /* SQLite has no sleep: rows counted, about 3 million a second here, so $1 seconds
         * take longer than $1 (a slower machine only makes them longer) */
        canal_db_prepare(app, "sleep", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                       "WHERE x < $1 * 5000000) SELECT count(*) FROM c", NULL);
    } else {
        canal_db_prepare(app, "types",
                         "SELECT 42::int4, 9000000000::int8, 1.5::float8, true, 'h\u00e9llo'::text AS t, "
                         "'\\x00ff41'::bytea AS raw, '2026-12-03 15:27:11.5+01'::timestamptz, NULL::int4, "
                         "'2147483648'::int8",
                         NULL);
        canal_db_prepare(app, "times10", "SELECT $1::int8 * 10", NULL);
        canal_db_prepare(app, "divide", "SELECT 10 / ($1::int8 - $1::int8)", NULL);
        canal_db_prepare(app, "sleep", "SELECT pg_sleep($1::float8)", NULL);
    }
    canal_db_prepare(app, "item", "SELECT id, name, price, active, stock FROM items WHERE id = $1", NULL);
    canal_db_prepare(app, "insert", "INSERT INTO items (name, price) VALUES ($1, $2) RETURNING id", NULL);
    canal_app_schema(app, &item_schema, NULL);
    canal_app_get(app, "types", types, NULL);
    canal_app_get(app, "items", items, NULL);
    canal_app_get(app, "items/{id:int}", item, NULL);
    canal_app_post(app, "items", insert, NULL);
    canal_app_get(app, "errors/syntax", syntax, NULL);
    canal_app_get(app, "errors/params", wrong_params, NULL);
    canal_app_get(app, "errors/param-type", bad_param, NULL);
    canal_app_get(app, "errors/unknown", unknown_stmt, NULL);
    canal_app_get(app, "pipeline", pipeline, NULL);
    canal_app_get(app, "chain", chain, NULL);
    canal_app_get(app, "sleep", sleep_q, NULL);
    canal_app_get(app, "sleep/callbacks", sleep_count, NULL);
    canal_app_get(app, "echo", echo, NULL);
    canal_app_get(app, "plaintext", plaintext, NULL);
    canal_app_post(app, "tx", txn, NULL);
    static const canal_controller_def_t items_controller = {.name = "Items", .actions = item_actions};
    canal_mvc_t *mvc = canal_mvc_create(app);
    if (mvc == NULL || canal_mvc_add_controller(mvc, &items_controller, NULL, &err) != 0) {
        fprintf(stderr, "canal-dbapp: %s\n", mvc ? err.message : "out of memory");
        return 1;
    }
    canal_app_metrics(app, "/metrics", NULL);
    canal_app_health(app, "/health", canal_db_ready, NULL);
    if (canal_app_error(app, &err) != 0) {
        fprintf(stderr, "canal-dbapp: %s\n", err.message);
        canal_app_destroy(app);
        canal_mvc_destroy(mvc);
        return 1;
    }
    if (canal_app_start(app) != 0)
        return 1;
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    return rc == 0 ? 0 : 1;
}
