/* SPDX-License-Identifier: MIT */
/*
 * offload: handlers whose work blocks (a SQLite query, a sleep) without blocking the event
 * loop. The work runs on canal's offload pool; the answer comes back on the request's own
 * thread. Meanwhile the loop keeps answering /plaintext at full speed.
 *
 *   GET /plaintext                  answered on the loop at once
 *   GET /offload/item/{id:int}      a SQLite query on the pool: the item as JSON, or 404
 *   GET /offload/sleep?ms=N         sleeps N ms (at most 10000) on the pool
 *   GET /deferred?ms=N              a thread of its own answers after N ms (canal_pending_post)
 *
 * and the same in controller mode: actions of an "Items" controller that offload their SQLite
 * work, with their after-filter run when the answer completes:
 *   GET  /api/items/{id:int}        the item, or 404
 *   POST /api/items                 {"name": ..., "price": ...}: 201 with the Location of the
 *                                   new item (link generation), or 400 from binding
 *   GET  /api/items/slow?ms=N       sleeps N ms on the pool, then 200 (a full queue: 503)
 *
 *   build/bin/canal-offload [--db FILE] [canal's flags: --port, --offload-threads, ...]
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <canal.h>

static char db_path[256];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/plain; charset=utf-8", "Hello, World!", 13);
}

/* ---- a SQLite query on the pool ---- */

struct item_job {
    int id;
    int found;
    char name[64];
    double price;
    char error[512];
};

/* One connection per pool thread, closed when the thread ends (at the app's shutdown). */
static pthread_key_t db_key;
static pthread_once_t db_key_once = PTHREAD_ONCE_INIT;

static void close_db(void *db)
{
    sqlite3_close(db);
}

static void make_db_key(void)
{
    pthread_key_create(&db_key, close_db);
}

/* This pool thread's connection, or NULL with the reason in error. */
static sqlite3 *thread_db(char *error, size_t size)
{
    pthread_once(&db_key_once, make_db_key);
    sqlite3 *db = pthread_getspecific(db_key);
    if (db == NULL) {
        if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
            snprintf(error, size, "open %s: %s", db_path, sqlite3_errmsg(db));
            sqlite3_close(db);
            return NULL;
        }
        sqlite3_busy_timeout(db, 5000); /* writers from several pool threads take turns */
        pthread_setspecific(db_key, db);
    }
    return db;
}

static void item_work(void *data) /* on a pool thread: no canal_req_t here */
{
    struct item_job *job = data;
    sqlite3_stmt *stmt = NULL;
    sqlite3 *db = thread_db(job->error, sizeof(job->error));
    if (db == NULL)
        return;
    if (sqlite3_prepare_v2(db, "SELECT name, price FROM items WHERE id = ?", -1, &stmt, NULL) != SQLITE_OK) {
        snprintf(job->error, sizeof(job->error), "prepare: %s", sqlite3_errmsg(db));
        return;
    }
    sqlite3_bind_int(stmt, 1, job->id);
    if (sqlite3_step(stmt) == SQLITE_ROW) {
        job->found = 1;
        snprintf(job->name, sizeof(job->name), "%s", (const char *)sqlite3_column_text(stmt, 0));
        job->price = sqlite3_column_double(stmt, 1);
    }
    sqlite3_finalize(stmt);
}

static void item_done(canal_req_t *req, void *data) /* back on the request's thread */
{
    struct item_job *job = data;
    if (req != NULL) { /* NULL: the client left, or the deadline answered 504 */
        if (job->error[0])
            canal_req_fail(req, "%s", job->error);
        else if (!job->found)
            canal_res_problem(req, 404, "no item %d", job->id);
        else
            canal_res_json_new(req, 200, json_pack("{s:i, s:s, s:f}", "id", job->id, "name", job->name, "price",
                                                   job->price));
    }
    free(job);
}

static int item(canal_req_t *req, void *data)
{
    struct item_job *job = calloc(1, sizeof(*job));
    if (job == NULL)
        return canal_req_fail(req, "out of memory");
    canal_req_param_int32(req, "id", &job->id);
    int rc = canal_offload(req, item_work, item_done, job);
    if (rc != CANAL_PENDING)
        free(job); /* the queue was full: a 503 went out, work and done will not run */
    return rc;
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

/* ---- the same in controller mode: actions that offload ---- */

/* An action's job: the item (first, so that item_work() takes the job as it is), its context
 * (valid while the request is: done gets req NULL otherwise) and the bound values. */
struct action_job {
    struct item_job item;
    canal_ctx_t *ctx;
    long ms;
};

static void action_item_done(canal_req_t *req, void *data)
{
    struct action_job *job = data;
    if (req != NULL) {
        if (job->item.error[0])
            canal_req_fail(req, "%s", job->item.error);
        else if (!job->item.found)
            canal_res_problem(req, 404, "no item %d", job->item.id);
        else
            canal_res_json_new(req, 200, json_pack("{s:i, s:s, s:f}", "id", job->item.id, "name", job->item.name,
                                                   "price", job->item.price));
    }
    free(job);
}

/* Offloads work with the job, or answers what canal_offload() set (a 503) and frees it. */
static int offload_job(canal_req_t *req, void (*work)(void *), canal_pending_fn done, struct action_job *job)
{
    int rc = canal_offload(req, work, done, job);
    if (rc != CANAL_PENDING)
        free(job);
    return rc;
}

static struct action_job *new_job(canal_ctx_t *ctx, canal_req_t *req)
{
    struct action_job *job = calloc(1, sizeof(*job));
    if (job != NULL)
        job->ctx = ctx;
    return job;
}

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
    struct action_job *job = new_job(ctx, req);
    if (job == NULL)
        return canal_req_fail(req, "out of memory");
    job->item.id = ((const get_args_t *)args)->id;
    return offload_job(req, item_work, action_item_done, job);
}

static void create_work(void *data)
{
    struct action_job *job = data;
    sqlite3_stmt *stmt = NULL;
    sqlite3 *db = thread_db(job->item.error, sizeof(job->item.error));
    if (db == NULL)
        return;
    if (sqlite3_prepare_v2(db, "INSERT INTO items(name, price) VALUES (?, ?)", -1, &stmt, NULL) != SQLITE_OK ||
        sqlite3_bind_text(stmt, 1, job->item.name, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_double(stmt, 2, job->item.price) != SQLITE_OK || sqlite3_step(stmt) != SQLITE_DONE)
        snprintf(job->item.error, sizeof(job->item.error), "insert: %s", sqlite3_errmsg(db));
    else
        job->item.id = (int)sqlite3_last_insert_rowid(db);
    sqlite3_finalize(stmt);
}

/* The 201's body: the item as stored */
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

static void create_done(canal_req_t *req, void *data)
{
    struct action_job *job = data;
    if (req != NULL) {
        char id[16];
        snprintf(id, sizeof(id), "%d", job->item.id);
        if (job->item.error[0])
            canal_req_fail(req, "%s", job->item.error);
        else
            canal_ctx_created(job->ctx, NULL, "Get", (canal_kv_t[]){{"id", id}}, 1, &item_schema,
                              &(item_t){job->item.id, job->item.name, job->item.price});
    }
    free(job);
}

static int action_create(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const create_args_t *a = args;
    struct action_job *job = new_job(ctx, req);
    if (job == NULL)
        return canal_req_fail(req, "out of memory");
    snprintf(job->item.name, sizeof(job->item.name), "%.*s", (int)a->name.len, a->name.base);
    job->item.price = a->price;
    return offload_job(req, create_work, create_done, job);
}

static void slow_work(void *data)
{
    sleep_ms(((struct action_job *)data)->ms);
}

static void slow_done(canal_req_t *req, void *data)
{
    struct action_job *job = data;
    if (req != NULL)
        canal_res_text(req, 200, canal_req_printf(req, "slept %ld", job->ms));
    free(job);
}

static int action_slow(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    struct action_job *job = new_job(ctx, req);
    if (job == NULL)
        return canal_req_fail(req, "out of memory");
    job->ms = ((const slow_args_t *)args)->ms;
    return offload_job(req, slow_work, slow_done, job);
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

/* Creates the example database: 1,000 items. */
static int make_db(const char *path)
{
    sqlite3 *db;
    char *err = NULL;
    unlink(path);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    int rc = sqlite3_exec(db,
                          "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, price REAL);"
                          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) "
                          "INSERT INTO items SELECT i, 'item ' || i, i * 0.25 FROM n;",
                          NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "canal-offload: %s\n", err);
    sqlite3_free(err);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    snprintf(db_path, sizeof(db_path), "/tmp/canal-offload-%d.db", (int)getpid());
    const char *db;
    const canal_option_t options[] = {{"db", CANAL_OPTION_STRING, &db, NULL, .meta = "FILE",
                                       .help = "the SQLite file; off: /tmp/canal-offload-PID.db"}};
    canal_config_options(&cfg, options, 1, &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1) {
        FILE *f = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(f, "%s\n", rc != 0 ? err.message : "canal-offload: no arguments but flags");
        canal_config_help(&cfg, 0, f);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    if (db != NULL)
        snprintf(db_path, sizeof(db_path), "%s", db);
    if (make_db(db_path) != 0)
        return 1;
    canal_app_t *app = canal_app_create(&cfg);
    canal_mvc_t *mvc = app != NULL ? canal_mvc_create(app) : NULL;
    if (mvc == NULL)
        return 1;
    canal_app_get(app, "plaintext", plaintext, NULL);
    canal_app_get(app, "offload/item/{id:int}", item, NULL);
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
            canal_app_port(app, 0), db_path);
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    unlink(db_path);
    return rc == 0 ? 0 : 1;
}
