/* SPDX-License-Identifier: MIT */
/*
 * offload: handlers whose work blocks without blocking the event loop, and answers given
 * later. Blocking work that is not a database (here a sleep; in a real program a library with
 * no asynchronous API: image resizing, a blocking SDK, a password hash) runs on canal's
 * offload pool, and the answer comes back on the request's own thread. Queries need no
 * offloading: they go through the database client (canal/db.h, here SQLite on threads of its
 * own), which calls back on the request's thread too. Meanwhile the loop keeps answering
 * /plaintext at full speed.
 *
 *   GET /plaintext                  answered on the loop at once
 *   GET /db/item/{id:int}           a query through canal_db: the item as JSON, or 404
 *   GET /offload/sleep?ms=N         sleeps N ms (at most 10000) on the pool
 *   GET /deferred?ms=N              a thread of its own answers after N ms (canal_pending_post)
 *
 * and the same in controller mode, with the controller's after-filter run when the deferred
 * answer completes:
 *   GET  /api/items/{id:int}        the item (a query), or 404
 *   POST /api/items                 {"name": ..., "price": ...}: 201 with the Location of the
 *                                   new item (link generation), or 400 from binding
 *   GET  /api/items/slow?ms=N       sleeps N ms on the pool, then 200 (a full queue: 503)
 *
 *   build/bin/canal-offload [--db FILE] [canal's flags: --port, --offload-threads, ...]
 *   (FILE: a SQLite database made afresh at start; default: one in memory)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <canal.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/plain; charset=utf-8", "Hello, World!", 13);
}

/* ---- a query through the database client ---- */

/* An item as stored: bound from a row (canal_db_bind()) and written by the same schema */
typedef struct {
    int32_t id;
    const char *name;
    double price;
} item_t;
static const canal_field_t item_fields[] = {
    {.name = "id", CANAL_FIELD(item_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "name", CANAL_FIELD(item_t, name), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED},
    {.name = "price", CANAL_FIELD(item_t, price), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t item_schema = {.name = "Item", .size = sizeof(item_t), .fields = item_fields};

/* The query's callback: on the request's thread, never for a request that is gone */
static void item_found(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    item_t it;
    if (canal_db_failed(req, res)) /* a 503 or a 500 is set */
        return;
    if (canal_db_rows(res) == 0)
        canal_res_problem(req, 404, "no item %d", (int)(intptr_t)data);
    else if (canal_db_bind(res, 0, &item_schema, &it) == 0)
        canal_res_model(req, 200, &item_schema, &it);
    else
        canal_req_fail(req, "items: a row that does not fit Item");
}

static int item(canal_req_t *req, void *data)
{
    int32_t id = 0;
    canal_req_param_int32(req, "id", &id);
    canal_db_param_t p = CANAL_DB_INT(id);
    return canal_db_query(req, "item", &p, 1, item_found, (void *)(intptr_t)id);
}

/* ---- a sleep on the pool ---- */

static void sleep_work(void *data)
{
    sleep_ms(*(long *)data);
}

static void sleep_done(canal_req_t *req, void *data)
{
    if (req != NULL)
        canal_res_text(req, 200, canal_req_printf(req, "slept %ld", *(long *)data));
    free(data);
}

static int slow(canal_req_t *req, void *data)
{
    int64_t ms = 100;
    int rc = canal_req_query_int64(req, "ms", &ms);
    if (rc != 0 && rc != CANAL_ENOTFOUND)
        return canal_res_problem(req, 400, "ms must be an integer");
    if (ms < 0 || ms > 10000)
        return canal_res_problem(req, 400, "ms must be between 0 and 10000");
    long *arg = malloc(sizeof(*arg));
    *arg = (long)ms;
    rc = canal_offload(req, sleep_work, sleep_done, arg);
    if (rc != CANAL_PENDING)
        free(arg);
    return rc;
}

/* ---- a thread of our own answers through canal_pending_post ---- */

struct later {
    canal_pending_t *pending;
    long ms;
};

static void later_answer(canal_req_t *req, void *data)
{
    struct later *l = data;
    if (req != NULL)
        canal_res_text(req, 200, canal_req_printf(req, "answered after %ld ms", l->ms));
    free(l);
}

static void *later_thread(void *data)
{
    struct later *l = data;
    sleep_ms(l->ms);
    canal_pending_post(l->pending, later_answer, l); /* releases the handle */
    return NULL;
}

static int deferred(canal_req_t *req, void *data)
{
    int64_t ms = 100;
    canal_req_query_int64(req, "ms", &ms);
    struct later *l = malloc(sizeof(*l));
    l->ms = ms < 0 ? 0 : ms > 10000 ? 10000 : (long)ms;
    l->pending = canal_req_defer(req);
    pthread_t t;
    if (l->pending == NULL || pthread_create(&t, NULL, later_thread, l) != 0) {
        canal_pending_complete(l->pending);
        free(l);
        return canal_req_fail(req, "cannot start a thread");
    }
    pthread_detach(t);
    return CANAL_PENDING;
}

/* ---- the same in controller mode ---- */

/* An action's sleep: its context (valid while the request is: done gets req NULL otherwise)
 * and the bound value */
struct action_job {
    canal_ctx_t *ctx;
    long ms;
};

/* The actions' arguments: each struct is described by a schema below, and the controller layer
 * binds and validates it before the action runs. */
typedef struct {
    int32_t id;
} get_args_t;
static const canal_field_t get_fields[] = {
    {.name = "id", CANAL_FIELD(get_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t get_args = {.name = "GetItemArgs", .size = sizeof(get_args_t), .fields = get_fields};

typedef struct {
    canal_str_t name;
    double price;
} create_args_t;
static const canal_field_t create_fields[] = {
    {.name = "name", CANAL_FIELD(create_args_t, name), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED,
     .min_length = 1, .max_length = 60},
    {.name = "price", CANAL_FIELD(create_args_t, price), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_REQUIRED,
     CANAL_MIN(0)},
    {.name = NULL}};
static const canal_schema_t create_args = {.name = "NewItem", .size = sizeof(create_args_t),
                                           .fields = create_fields};

typedef struct {
    int32_t ms;
} slow_args_t;
static const canal_field_t slow_fields[] = {
    {.name = "ms", CANAL_FIELD(slow_args_t, ms), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY, .def = "100",
     CANAL_MIN(0), CANAL_MAX(10000)},
    {.name = NULL}};
static const canal_schema_t slow_args = {.name = "SlowArgs", .size = sizeof(slow_args_t), .fields = slow_fields};

static int action_get(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    int32_t id = ((const get_args_t *)args)->id;
    canal_db_param_t p = CANAL_DB_INT(id);
    return canal_db_query(req, "item", &p, 1, item_found, (void *)(intptr_t)id);
}

static void created(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    item_t it;
    char id[16];
    if (canal_db_failed(req, res))
        return;
    if (canal_db_bind(res, 0, &item_schema, &it) != 0) {
        canal_req_fail(req, "items: the insert returned no item");
        return;
    }
    snprintf(id, sizeof(id), "%d", (int)it.id);
    canal_ctx_created(data, NULL, "Get", (canal_kv_t[]){{"id", id}}, 1, &item_schema, &it);
}

static int action_create(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const create_args_t *a = args;
    canal_db_param_t p[] = {CANAL_DB_TEXTN(a->name.base, a->name.len), CANAL_DB_DOUBLE(a->price)};
    return canal_db_query(req, "item_insert", p, 2, created, ctx); /* ctx: valid while req is */
}

static void slow_work(void *data)
{
    sleep_ms(((struct action_job *)data)->ms);
}

static void slow_done(canal_req_t *req, void *data) /* back on the request's thread */
{
    struct action_job *job = data;
    if (req != NULL)
        canal_res_text(req, 200, canal_req_printf(req, "slept %ld", job->ms));
    free(job);
}

static int action_slow(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    struct action_job *job = calloc(1, sizeof(*job));
    if (job == NULL)
        return canal_req_fail(req, "out of memory");
    job->ctx = ctx;
    job->ms = ((const slow_args_t *)args)->ms;
    int rc = canal_offload(req, slow_work, slow_done, job);
    if (rc != CANAL_PENDING)
        free(job); /* the queue was full: a 503 went out, work and done will not run */
    return rc;
}

/* Runs when the answer is committed, deferred or not: it sees the status the action's done
 * (or canal_offload()'s 503) set. */
static int served_by(canal_ctx_t *ctx, void *data)
{
    char status[8];
    snprintf(status, sizeof(status), "%d", canal_res_status_code(canal_ctx_req(ctx)));
    return canal_res_header(canal_ctx_req(ctx), "x-after-filter", status);
}

static const canal_action_def_t item_actions[] = {
    {.name = "Slow", .routes = {"slow"}, .handler = action_slow, .args = &slow_args},
    {.name = "Get", .routes = {"{id:int}"}, .handler = action_get, .args = &get_args},
    {.name = "Create", .methods = "POST", .routes = {""}, .handler = action_create, .args = &create_args,
     .options = {CANAL_DOC(.responses = {{.status = 201, .schema = &item_schema}, {.status = 400}})}},
    {.name = NULL},
};
static const canal_controller_def_t items = {
    .name = "Items", .prefix = "api/[controller]", .actions = item_actions,
    .filters = {{.after = served_by}},
};

/* The example's database, made afresh at start: 1,000 items. */
static const char migration[] = "DROP TABLE IF EXISTS items;"
                                "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);"
                                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) "
                                "INSERT INTO items SELECT i, 'item ' || i, i * 0.25 FROM n;";

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    const char *db;
    const canal_option_t options[] = {{"db", CANAL_OPTION_STRING, &db, NULL, .meta = "FILE",
                                       .help = "the SQLite file; off: in memory"}};
    canal_config_options(&cfg, options, 1, &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1) {
        FILE *f = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(f, "%s\n", rc != 0 ? err.message : "canal-offload: no arguments but flags");
        canal_config_help(&cfg, 0, f);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    static char db_url[4096] = "sqlite::memory:";
    if (db != NULL)
        snprintf(db_url, sizeof(db_url), "sqlite:%s", db);
    canal_app_t *app = canal_app_create(&cfg);
    canal_mvc_t *mvc = app != NULL ? canal_mvc_create(app) : NULL;
    if (mvc == NULL)
        return 1;
    /* errors here are sticky on the app: canal_app_error() below reports the first */
    canal_app_db(app, db_url, NULL, NULL);
    canal_db_exec_script(app, migration, NULL);
    canal_db_prepare(app, "item", "SELECT id, name, price FROM items WHERE id = $1", NULL);
    canal_db_prepare(app, "item_insert", "INSERT INTO items(name, price) VALUES ($1, $2) RETURNING id, name, price",
                     NULL);
    canal_app_get(app, "plaintext", plaintext, NULL);
    canal_app_get(app, "db/item/{id:int}", item, NULL);
    canal_app_get(app, "offload/sleep", slow, NULL);
    canal_app_get(app, "deferred", deferred, NULL);
    canal_mvc_add_controller(mvc, &items, NULL, NULL);
    if (canal_app_error(app, &err) != 0) { /* the first registration error, if any */
        fprintf(stderr, "canal-offload: %s\n", err.message);
        return 1;
    }
    if (canal_app_start(app) != 0)
        return 1;
    fprintf(stderr, "canal-offload listening on http://%s:%u (database %s)\n", canal_app_config(app)->host,
            canal_app_port(app, 0), db_url);
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    return rc == 0 ? 0 : 1;
}
