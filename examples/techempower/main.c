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
 *   /fortunes            every Fortune row and one added at request time, sorted by message
 *                        in the app, rendered by a canal view (Mustache: the view engine
 *                        escapes), text/html; charset=utf-8
 *   /cached-queries?count=N  N random World rows from a data cache (canal/cache.h) filled
 *                        from the database on a miss, N clamped as for /queries
 *
 * Every answer has Server and Date headers (libh2o adds both: canal's server name is
 * "canal"). The queries of a request are started at once and pipelined on the worker's
 * connections (canal/db.h).
 *
 *   canal-tfb --db URL [--pool N] [--db-waiting N] [--port N] [--threads N] [canal's flags]
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

static int json(canal_req_t *req, void *data)
{
    return canal_res_json_new(req, 200, json_pack("{s:s}", "message", "Hello, World!"));
}

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/plain", "Hello, World!", 13);
}

/* ---- /db ---- */

static void db_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    world_t w;
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

/* queries=N (count=N): 1..500; missing or not a number: 1 */
static size_t count_of(canal_req_t *req, const char *name)
{
    canal_str_t v = {0};
    canal_req_query(req, name, &v);
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
    r->n = count_of(req, "queries");
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

/* ---- /fortunes ---- */

typedef struct {
    int32_t id;
    const char *message;
} fortune_t;

static const canal_field_t fortune_fields[] = {
    {.name = "id", CANAL_FIELD(fortune_t, id), .type = CANAL_TYPE_INT32},
    {.name = "message", CANAL_FIELD(fortune_t, message), .type = CANAL_TYPE_CSTRING},
    {.name = NULL}};
static const canal_schema_t fortune_schema = {.name = "Fortune", .size = sizeof(fortune_t), .fields = fortune_fields};

/* the page: {{message}} is escaped by the view engine, the rows come from the list "fortunes" */
static const char fortunes_page[] =
    "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
    "<tr><th>id</th><th>message</th></tr>"
    "{{#fortunes}}<tr><td>{{id}}</td><td>{{message}}</td></tr>{{/fortunes}}"
    "</table></body></html>";

struct fortunes {
    fortune_t *f;
    size_t n;
};

static int fortunes_name(const char *name, size_t len, canal_view_data_t *out, void *arg)
{
    const struct fortunes *fs = arg;
    if (len != 8 || memcmp(name, "fortunes", 8) != 0)
        return 0;
    *out = CANAL_VIEW_MODELS(&fortune_schema, fs->f, fs->n);
    return 1;
}

static int by_message(const void *a, const void *b)
{
    return strcmp(((const fortune_t *)a)->message, ((const fortune_t *)b)->message);
}

static void fortunes_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    if (canal_db_failed(req, res))
        return;
    struct fortunes fs = {.n = canal_db_rows(res) + 1};
    fs.f = canal_req_alloc(req, fs.n * sizeof(*fs.f));
    for (size_t i = 0; i + 1 < fs.n; i++)
        if (canal_db_bind(res, i, &fortune_schema, &fs.f[i]) != 0 || fs.f[i].message == NULL) {
            canal_req_fail(req, "a fortune row that does not bind");
            return;
        }
    fs.f[fs.n - 1] = (fortune_t){0, "Additional fortune added at request time."};
    qsort(fs.f, fs.n, sizeof(*fs.f), by_message);
    canal_res_view(req, 200, "fortunes", &CANAL_VIEW_FN(fortunes_name, &fs));
}

static int fortunes(canal_req_t *req, void *data)
{
    return canal_db_query(req, "fortunes", NULL, 0, fortunes_done, NULL);
}

/* ---- /cached-queries: World rows from the data cache, a miss read from the database ---- */

static canal_cache_t *worlds;

static void cached_done(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    struct slot *s = data;
    slot_done(req, res, data);
    if (!s->r->failed)
        canal_cache_set(worlds, &s->w->id, sizeof(s->w->id), s->w, sizeof(*s->w), 0);
}

static int cached_queries(canal_req_t *req, void *data)
{
    struct rows *r = canal_req_alloc(req, sizeof(*r));
    r->n = count_of(req, "count");
    r->back = 0;
    r->failed = 0;
    r->w = canal_req_alloc(req, r->n * sizeof(*r->w));
    size_t missed = 0;
    for (size_t i = 0; i < r->n; i++) {
        int32_t id = random_id();
        size_t len;
        if (canal_cache_get(worlds, &id, sizeof(id), &r->w[i], sizeof(r->w[i]), &len) == 0 && len == sizeof(r->w[i]))
            continue;
        struct slot *s = canal_req_alloc(req, sizeof(*s));
        *s = (struct slot){r, &r->w[i]};
        canal_db_param_t p = CANAL_DB_INT(id);
        int rc = canal_db_query(req, "world", &p, 1, cached_done, s);
        if (rc != CANAL_PENDING)
            return rc;
        missed++;
    }
    if (missed == 0) {
        queries_then(req, r);
        return 0;
    }
    canal_db_then(req, queries_then, r);
    return CANAL_PENDING;
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    const char *url;
    size_t pool, waiting;
    const canal_option_t options[] = {
        {"db", CANAL_OPTION_STRING, &url, "postgresql://benchmarkdbuser:benchmarkdbpass@tfb-database/hello_world",
         .meta = "URL", .help = "the hello_world database"},
        {"pool", CANAL_OPTION_NUMBER, &pool, "0", 0, 1024,
         .help = "database connections per worker; 0: canal_db's default"},
        /* TechEmpower's 512 connections of /queries?queries=20 are 10,240 queries at once */
        {"db-waiting", CANAL_OPTION_NUMBER, &waiting, "16384", 1, 1u << 20,
         .help = "queries waiting for a connection, per worker (then 503)"},
    };
    canal_config_options(&cfg, options, 3, &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1) {
        FILE *f = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(f, "%s\n", rc != 0 ? err.message : "canal-tfb: no arguments but flags");
        canal_config_help(&cfg, 0, f);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    canal_db_options_t opt = {.pool_size = (unsigned)pool, .max_waiting = (unsigned)waiting};
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    if (canal_app_db(app, url, &opt, &err) != 0 ||
        canal_db_prepare(app, "world", "SELECT id, randomnumber AS \"randomNumber\" FROM world WHERE id = $1", &err) != 0 ||
        canal_db_prepare(app, "fortunes", "SELECT id, message FROM fortune", &err) != 0) {
        fprintf(stderr, "canal-tfb: %s\n", err.message);
        canal_app_destroy(app);
        return 1;
    }
    canal_app_schema(app, &world_schema, NULL);
    canal_app_view(app, "fortunes", fortunes_page, NULL);
    /* every World row fits: 10,000 entries of 4 + 8 bytes and the entries' own cost */
    worlds = canal_cache_create(app, &(canal_cache_options_t){.name = "worlds", .max_bytes = 4u << 20}, &err);
    if (worlds == NULL) {
        fprintf(stderr, "canal-tfb: %s\n", err.message);
        canal_app_destroy(app);
        return 1;
    }
    canal_app_get(app, "json", json, NULL);
    canal_app_get(app, "plaintext", plaintext, NULL);
    canal_app_get(app, "db", db, NULL);
    canal_app_get(app, "queries", queries, NULL);
    canal_app_get(app, "updates", updates, NULL);
    canal_app_get(app, "fortunes", fortunes, NULL);
    canal_app_get(app, "cached-queries", cached_queries, NULL);
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
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
