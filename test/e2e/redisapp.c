/* SPDX-License-Identifier: MIT */
/*
 * canal-redisapp: the Redis client of test/e2e/redis.sh (--redis URL, --redis-timeout MS).
 *
 *   GET  /kv/{key}     GET key: 200 and the value, 404 for none
 *   PUT  /kv/{key}     SET key BODY EX 600: 204
 *   POST /incr/{key}   INCR key: 200 {"n": N}
 *   GET  /chain/{key}  INCR key, then (from INCR's callback) GET key: 200 {"n": N, "v": "N"}
 *   GET  /burst/{key}  100 pipelined INCR key in one request: 200 {"last": N}
 *   POST /eval         EVAL of the body with no keys (an error reply is a 502)
 *   GET  /public       200, no Redis
 * Every Redis route answers 503 problem details with Retry-After when Redis is unreachable.
 * /metrics, and /health/ready 503 while a worker's connection is down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>
#include <canal/async.h>

static canal_redis_t *redis;

/* the answer to a failed command, or to an error reply */
static int failed(canal_req_t *req, const canal_redis_reply_t *reply, int status)
{
    if (status != 0)
        return canal_redis_unavailable(req);
    if (canal_redis_reply_type(reply) == CANAL_REDIS_ERROR) {
        canal_str_t e = canal_redis_reply_str(reply);
        return canal_res_problem(req, 502, "redis: %.*s", (int)e.len, e.base);
    }
    return -1;
}

/* a handler's answer for a command that could not be sent */
static int not_sent(canal_req_t *req, int rc)
{
    if (rc == CANAL_PENDING)
        return CANAL_PENDING;
    if (rc == CANAL_ECLOSED || rc == CANAL_EAGAIN)
        return canal_redis_unavailable(req);
    return canal_req_fail(req, "redis: %s", canal_strerror(rc));
}

static int command(canal_req_t *req, int argc, const char *const *argv, const size_t *lens, canal_redis_fn cb,
                   void *data)
{
    return not_sent(req, canal_redis_command(req, redis, argc, argv, lens, cb, data));
}

static void got(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    if (failed(req, reply, status) == 0)
        return;
    if (canal_redis_reply_type(reply) == CANAL_REDIS_NIL) {
        canal_res_problem(req, 404, "no such key");
        return;
    }
    canal_str_t v = canal_redis_reply_str(reply);
    canal_res_body(req, 200, "application/octet-stream", v.base, v.len);
}

static int kv_get(canal_req_t *req, void *data)
{
    canal_str_t key = canal_req_param(req, "key");
    const char *argv[] = {"GET", key.base};
    size_t lens[] = {3, key.len};
    return command(req, 2, argv, lens, got, NULL);
}

static void set_done(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    if (failed(req, reply, status) != 0)
        canal_res_status(req, 204);
}

static int kv_put(canal_req_t *req, void *data)
{
    canal_str_t key = canal_req_param(req, "key"), body = canal_req_body(req);
    const char *argv[] = {"SET", key.base, body.base ? body.base : "", "EX", "600"};
    size_t lens[] = {3, key.len, body.len, 2, 3};
    return command(req, 5, argv, lens, set_done, NULL);
}

static void incr_done(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    if (failed(req, reply, status) != 0)
        canal_res_json_new(req, 200, json_pack("{s:I}", "n", (json_int_t)canal_redis_reply_int(reply)));
}

static int incr(canal_req_t *req, void *data)
{
    canal_str_t key = canal_req_param(req, "key");
    const char *argv[] = {"INCR", key.base};
    size_t lens[] = {4, key.len};
    return command(req, 2, argv, lens, incr_done, NULL);
}

struct chain {
    long long n;
    canal_str_t key;
};

static void chain_get(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    struct chain *ch = data;
    if (failed(req, reply, status) != 0) {
        canal_str_t v = canal_redis_reply_str(reply);
        canal_res_json_new(req, 200, json_pack("{s:I,s:s%}", "n", (json_int_t)ch->n, "v", v.base ? v.base : "", v.len));
    }
}

static void chain_incr(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    struct chain *ch = data;
    if (failed(req, reply, status) == 0)
        return;
    ch->n = canal_redis_reply_int(reply);
    const char *argv[] = {"GET", ch->key.base};
    size_t lens[] = {3, ch->key.len};
    int rc = canal_redis_command(req, redis, 2, argv, lens, chain_get, ch);
    if (rc != CANAL_PENDING)
        not_sent(req, rc);
}

static int chain(canal_req_t *req, void *data)
{
    struct chain *ch = canal_req_alloc(req, sizeof(*ch));
    ch->key = canal_req_param(req, "key");
    const char *argv[] = {"INCR", ch->key.base};
    size_t lens[] = {4, ch->key.len};
    return command(req, 2, argv, lens, chain_incr, ch);
}

struct burst {
    long long last;
    int failed;
};

static void burst_one(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    struct burst *b = data;
    if (status != 0 || canal_redis_reply_type(reply) != CANAL_REDIS_INTEGER) {
        b->failed = 1;
        canal_redis_unavailable(req);
    } else if (!b->failed) {
        long long n = canal_redis_reply_int(reply);
        if (n != b->last + 1 && b->last != 0)
            b->failed = 1, canal_res_problem(req, 500, "replies out of order");
        else
            b->last = n, canal_res_json_new(req, 200, json_pack("{s:I}", "last", (json_int_t)n));
    }
}

static int burst(canal_req_t *req, void *data)
{
    struct burst *b = canal_req_alloc(req, sizeof(*b));
    *b = (struct burst){0};
    canal_str_t key = canal_req_param(req, "key");
    const char *argv[] = {"INCR", key.base};
    size_t lens[] = {4, key.len};
    int rc = CANAL_PENDING;
    for (int i = 0; i < 100 && rc == CANAL_PENDING; i++)
        rc = canal_redis_command(req, redis, 2, argv, lens, burst_one, b);
    if (rc != CANAL_PENDING && b->last == 0) /* the first failed: nothing is in flight */
        return not_sent(req, rc);
    return CANAL_PENDING;
}

static void eval_done(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    if (failed(req, reply, status) != 0)
        canal_res_text(req, 200, "evaluated\n");
}

static int eval(canal_req_t *req, void *data)
{
    canal_str_t body = canal_req_body(req);
    const char *argv[] = {"EVAL", body.base ? body.base : "", "0"};
    size_t lens[] = {4, body.len, 1};
    return command(req, 3, argv, lens, eval_done, NULL);
}

static int public(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "public\n");
}

static int ready(canal_app_t *app, void *data)
{
    return canal_redis_ready(redis);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1;
    if (canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-redisapp: %s\n", err.message);
        return 2;
    }
    const char *url = "redis://127.0.0.1:6379";
    unsigned timeout = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--redis") == 0)
            url = argv[i + 1];
        else if (strcmp(argv[i], "--redis-timeout") == 0)
            timeout = (unsigned)atoi(argv[i + 1]);
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    redis = canal_app_redis(app, url, &(canal_redis_options_t){.timeout_ms = timeout}, &err);
    if (redis == NULL) {
        fprintf(stderr, "canal-redisapp: %s\n", err.message);
        canal_app_destroy(app);
        return 1;
    }
    canal_app_get(app, "/kv/{key}", kv_get, NULL);
    canal_app_put(app, "/kv/{key}", kv_put, NULL);
    canal_app_post(app, "/incr/{key}", incr, NULL);
    canal_app_get(app, "/chain/{key}", chain, NULL);
    canal_app_get(app, "/burst/{key}", burst, NULL);
    canal_app_post(app, "/eval", eval, NULL);
    canal_app_get(app, "/public", public, NULL);
    canal_app_metrics(app, "/metrics", NULL);
    canal_app_health(app, "/health", ready, NULL);
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    fprintf(stderr, "canal-redisapp listening on http://%s:%u\n", cfg.host, canal_app_port(app, 0));
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
