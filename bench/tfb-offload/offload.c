/* SPDX-License-Identifier: MIT */
/*
 * tfb-offload: TechEmpower's /db and /queries?queries=N served "the offload way", as a canal
 * user did before canal/db.h: blocking libpq on the offload pool's threads (canal_offload()),
 * each pool thread with a connection of its own made by the pool's thread_init hook and the
 * statement prepared on it; a job struct per request, malloc'd (the request may be gone when
 * the job ends), the rows copied into it, the answer written by done on the request's thread.
 * canal writes the Server and Date headers. bench/db measures it beside canal-tfb (canal_db on the worker loops) and tfb-baseline.
 *
 *   build/bench/tfb-offload --db CONNINFO [canal's flags: --port N --threads N --offload-threads N]
 *
 * The offload pool's thread count is the number of database connections (default 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libpq-fe.h>
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

static const char *conninfo = "";
static _Thread_local PGconn *pg; /* the pool thread's own connection */
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

static int pool_thread_init(void *data)
{
    pg = PQconnectdb(conninfo);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "tfb-offload: %s", PQerrorMessage(pg));
        return -1;
    }
    PGresult *r = PQprepare(pg, "world", "SELECT id, randomnumber FROM world WHERE id = $1", 0, NULL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "tfb-offload: %s", PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

static void pool_thread_exit(void *data)
{
    PQfinish(pg);
    pg = NULL;
}

/* one request's rows: filled on a pool thread, answered on the request's thread */
struct job {
    size_t n;
    int array, failed;
    world_t w[];
};

static void fetch_rows(void *data)
{
    struct job *j = data;
    for (size_t i = 0; i < j->n && !j->failed; i++) {
        char id[12];
        snprintf(id, sizeof(id), "%d", (int)j->w[i].id);
        const char *values[1] = {id};
        PGresult *r = PQexecPrepared(pg, "world", 1, values, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
            j->w[i].id = (int32_t)atoi(PQgetvalue(r, 0, 0));
            j->w[i].randomNumber = (int32_t)atoi(PQgetvalue(r, 0, 1));
        } else {
            j->failed = 1;
            if (PQstatus(pg) != CONNECTION_OK)
                PQreset(pg);
        }
        PQclear(r);
    }
}

/* on the request's thread: the row (/db) or the array (/queries) */
static void rows_done(canal_req_t *req, void *data)
{
    struct job *j = data;
    if (req != NULL) {
        if (j->failed)
            canal_req_fail(req, "no world row");
        else if (j->array)
            canal_res_model_array(req, 200, &world_schema, j->w, j->n);
        else
            canal_res_model(req, 200, &world_schema, &j->w[0]);
    }
    free(j);
}

static int start(canal_req_t *req, size_t n, int array)
{
    struct job *j = malloc(sizeof(*j) + n * sizeof(world_t));
    if (j == NULL) {
        canal_req_fail(req, "out of memory");
        return 0;
    }
    j->n = n;
    j->array = array;
    j->failed = 0;
    for (size_t i = 0; i < n; i++)
        j->w[i].id = random_id();
    int rc = canal_offload(req, fetch_rows, rows_done, j);
    if (rc != CANAL_PENDING) /* the pool's queue is full: a 503 is set, nothing runs */
        free(j);
    return rc;
}

static int db(canal_req_t *req, void *data)
{
    return start(req, 1, 0);
}

/* queries=N: 1..500; missing or not a number: 1 */
static size_t count_of(canal_req_t *req)
{
    canal_str_t v = {0};
    canal_req_query(req, "queries", &v);
    long n = 0;
    for (size_t i = 0; v.base != NULL && i < v.len; i++) {
        if (v.base[i] < '0' || v.base[i] > '9')
            return 1;
        if (n <= MAX_QUERIES)
            n = n * 10 + (v.base[i] - '0');
    }
    return n < 1 ? 1 : n > MAX_QUERIES ? MAX_QUERIES : (size_t)n;
}

static int queries(canal_req_t *req, void *data)
{
    return start(req, count_of(req), 1);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1;
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "tfb-offload: %s\n", err.message);
        return 2;
    }
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 < argc && strcmp(argv[i], "--db") == 0) {
            conninfo = argv[i + 1];
        } else {
            fprintf(stderr, "usage: tfb-offload --db CONNINFO [canal's flags: --port N --threads N "
                            "--offload-threads N ...]\n");
            return 2;
        }
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_offload_hooks_t hooks = {.thread_init = pool_thread_init, .thread_exit = pool_thread_exit};
    canal_app_offload_hooks(app, &hooks);
    canal_app_schema(app, &world_schema, NULL);
    canal_app_get(app, "db", db, NULL);
    canal_app_get(app, "queries", queries, NULL);
    if (canal_app_error(app, &err) != 0) {
        fprintf(stderr, "tfb-offload: %s\n", err.message);
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
