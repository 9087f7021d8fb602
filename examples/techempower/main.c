/* SPDX-License-Identifier: MIT */
/*
 * canal-tfb: TechEmpower's Framework Benchmarks test types on canal, by their published rules:
 *
 *   /json                {"message":"Hello, World!"}, a new object each time
 *   /plaintext           Hello, World!
 *   /db                  one random World row: {"id":N,"randomNumber":N}
 *   /queries?queries=N   N random rows, one SELECT each (never WHERE id IN), N clamped to
 *                        1..500, missing or not a number: 1
 *   /updates?queries=N   the same, then every row gets a new random number 1..10000,
 *                        persisted by one batched UPDATE (ids sorted: no deadlock between
 *                        concurrent batches)
 *
 * Every answer has Server and Date headers (libh2o adds Date). The queries of a request are
 * started at once and pipelined on the worker's connections (canal/db.h).
 *
 *   canal-tfb --db URL [--pool N] [--port N] [--threads N] [canal's other flags]
 *
 * examples/techempower/create-db.sh makes the database in a throwaway PostgreSQL.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <canal.h>

#define MAX_QUERIES 500

typedef struct {
    int32_t id;
    int32_t randomNumber;
} world_t;

static const canal_field_t world_fields[] = {
    {.name = "id", CANAL_FIELD(world_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "randomNumber", CANAL_FIELD(world_t, randomNumber), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t world_schema = {.name = "World", .size = sizeof(world_t), .fields = world_fields};

/* a random number 1..10000, from this thread's xorshift generator */
static _Thread_local uint64_t rng;

static int32_t random_id(void)
{
    if (rng == 0)
        rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&rng;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int32_t)(rng % 10000) + 1;
}

static void server_header(canal_req_t *req)
{
    canal_res_header(req, "server", "canal");
}

static int json(canal_req_t *req, void *data)
{
    server_header(req);
    return canal_res_json_new(req, 200, json_pack("{s:s}", "message", "Hello, World!"));
}

static int plaintext(canal_req_t *req, void *data)
{
    server_header(req);
    return canal_res_body_static(req, 200, "text/plain", "Hello, World!", 13);
}

/* ---- /db ---- */

static void db_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    world_t w;
    server_header(req);
    if (canal_db_failed(req, res))
        return;
    if (canal_db_bind(res, 0, &world_schema, &w) != 0)
        canal_req_fail(req, "no world row");
    else
        canal_res_model(req, 200, &world_schema, &w);
}

static int db(canal_req_t *req, void *data)
{
    canal_db_param_t id = CANAL_DB_INT(random_id());
    return canal_db_query(req, "world", &id, 1, db_done, NULL);
}

/* ---- /queries and /updates ---- */

struct rows {
    size_t n, back;
    int failed;        /* a query failed: its answer is set */
    world_t *w;
};

/* queries=N: 1..500; missing or not a number: 1 */
static size_t count_of(canal_req_t *req)
{
    canal_str_t v = {0};
    canal_req_query(req, "queries", &v);
    long n = 0;
    for (size_t i = 0; v.base != NULL && i < v.len; i++) {
        if (v.base[i] < '0' || v.base[i] > '9')
            return 1; /* not an integer */
        if (n <= MAX_QUERIES)
            n = n * 10 + (v.base[i] - '0');
    }
    return n < 1 ? 1 : n > MAX_QUERIES ? MAX_QUERIES : (size_t)n;
}

static struct rows *rows_make(canal_req_t *req)
{
    struct rows *r = canal_req_alloc(req, sizeof(*r));
    r->n = count_of(req);
    r->back = 0;
    r->failed = 0;
    r->w = canal_req_alloc(req, r->n * sizeof(*r->w));
    return r;
}

/* one row's query: its place in the answer */
struct slot {
    struct rows *r;
    world_t *w;
};

static void slot_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct slot *s = data;
    if (s->r->failed)
        return;
    if (canal_db_failed(req, res) || canal_db_bind(res, 0, &world_schema, s->w) != 0) {
        s->r->failed = 1;
        if (!canal_res_is_problem(req))
            canal_req_fail(req, "no world row");
    }
}

static int start_rows(canal_req_t *req, struct rows *r, void (*then)(canal_req_t *, void *))
{
    struct slot *slots = canal_req_alloc(req, r->n * sizeof(*slots));
    for (size_t i = 0; i < r->n; i++) {
        slots[i] = (struct slot){r, &r->w[i]};
        canal_db_param_t id = CANAL_DB_INT(random_id());
        int rc = canal_db_query(req, "world", &id, 1, slot_done, &slots[i]);
        if (rc != CANAL_PENDING)
            return rc;
    }
    canal_db_then(req, then, r);
    return CANAL_PENDING;
}

static void queries_then(canal_req_t *req, void *data)
{
    struct rows *r = data;
    server_header(req);
    if (!r->failed)
        canal_res_model_array(req, 200, &world_schema, r->w, r->n);
}

static int queries(canal_req_t *req, void *data)
{
    return start_rows(req, rows_make(req), queries_then);
}

static void updated(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct rows *r = data;
    server_header(req);
    if (!canal_db_failed(req, res))
        canal_res_model_array(req, 200, &world_schema, r->w, r->n);
}

static int by_id(const void *a, const void *b)
{
    const world_t *x = *(const world_t *const *)a, *y = *(const world_t *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* every row read: new numbers, one UPDATE ... FROM (VALUES ($1, $2), ...) for the distinct ids
 * in id order (a row drawn twice gets one number, so the answer is what is stored) */
static void updates_then(canal_req_t *req, void *data)
{
    struct rows *r = data;
    if (r->failed)
        return;
    world_t **order = canal_req_alloc(req, r->n * sizeof(*order));
    for (size_t i = 0; i < r->n; i++)
        order[i] = &r->w[i];
    qsort(order, r->n, sizeof(*order), by_id);
    canal_db_param_t *p = canal_req_alloc(req, 2 * r->n * sizeof(*p));
    char *sql = canal_req_alloc(req, 128 + r->n * 32);
    size_t len = (size_t)sprintf(sql, "UPDATE world SET randomnumber = v.r FROM (VALUES ");
    size_t np = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (i > 0 && order[i]->id == order[i - 1]->id) {
            order[i]->randomNumber = order[i - 1]->randomNumber;
            continue;
        }
        order[i]->randomNumber = random_id();
        p[np] = CANAL_DB_INT(order[i]->id);
        p[np + 1] = CANAL_DB_INT(order[i]->randomNumber);
        len += (size_t)sprintf(sql + len, "%s($%zu::int, $%zu::int)", np ? ", " : "", np + 1, np + 2);
        np += 2;
    }
    sprintf(sql + len, ") AS v(id, r) WHERE world.id = v.id");
    canal_db_query_sql(req, sql, p, np, updated, r);
}

static int updates(canal_req_t *req, void *data)
{
    return start_rows(req, rows_make(req), updates_then);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1;
    if (canal_config_load(&cfg, &argc, argv, &err) != 0) { /* --config FILE, CANAL_*, flags */
        fprintf(stderr, "canal-tfb: %s\n", err.message);
        return 2;
    }
    const char *url = "postgresql://benchmarkdbuser:benchmarkdbpass@tfb-database/hello_world";
    canal_db_options_t opt = {0};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 < argc && strcmp(argv[i], "--db") == 0) {
            url = argv[i + 1];
        } else if (i + 1 < argc && strcmp(argv[i], "--pool") == 0) {
            opt.pool_size = (unsigned)atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "usage: canal-tfb [--db URL] [--pool N] [canal's flags: --port N --threads N ...]\n");
            return 2;
        }
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_app_db(app, url, &opt, NULL);
    canal_db_prepare(app, "world", "SELECT id, randomnumber AS \"randomNumber\" FROM world WHERE id = $1", NULL);
    canal_app_schema(app, &world_schema, NULL);
    canal_app_get(app, "json", json, NULL);
    canal_app_get(app, "plaintext", plaintext, NULL);
    canal_app_get(app, "db", db, NULL);
    canal_app_get(app, "queries", queries, NULL);
    canal_app_get(app, "updates", updates, NULL);
    if (canal_app_error(app, &err) != 0) {
        fprintf(stderr, "canal-tfb: %s\n", err.message);
        canal_app_destroy(app);
        return 1;
    }
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
