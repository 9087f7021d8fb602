/* SPDX-License-Identifier: MIT */
/*
 * canal-outputcacheapp: the routes of test/e2e/output-cache.sh, each behind the output cache
 * (canal/cache.h) but the last two. Every cached handler answers "NAME N", N its calls so far,
 * so a client sees whether it ran.
 *
 *   GET  /page        a header of its own (x-made), kept
 *   GET  /vary        varies by Accept-Language and X-Tenant
 *   GET  /short       a time to live of 30 ms
 *   GET  /big?k=K     1,500 bytes; the store holds 64 KiB (two such answers a shard)
 *   GET  /tagged      tagged "news"
 *   GET  /cookie      sets a cookie: never kept
 *   GET  /private     Cache-Control: private: never kept
 *   GET  /nostore     Cache-Control: no-store: never kept
 *   GET  /missing     a 404: never kept
 *   POST /post        never kept (not GET)
 *   GET  /anyone      allow_credentials: kept for requests with Authorization or a Cookie too
 *   POST /evict?tag=T canal_cache_evict_tag(app, T) from a handler: 204, or 404 for no such tag
 *   GET  /metrics
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>

struct route {
    const char *name, *header, *value;
    int status;
    size_t size;
    atomic_int calls;
};

static int counted(canal_req_t *req, void *data)
{
    struct route *r = data;
    int n = atomic_fetch_add(&r->calls, 1) + 1;
    if (r->header != NULL)
        canal_res_header(req, r->header, r->value);
    size_t size = r->size ? r->size : 64;
    char *body = canal_req_alloc(req, size + 1);
    int len = snprintf(body, size + 1, "%s %d", r->name, n);
    if (r->size > 0) {
        memset(body + len, '.', size - (size_t)len);
        len = (int)size;
    }
    return canal_res_body(req, r->status ? r->status : 200, "text/plain", body, (size_t)len);
}

static canal_app_t *the_app;

static int evict(canal_req_t *req, void *data)
{
    canal_str_t tag = {NULL, 0};
    char name[64];
    canal_req_query(req, "tag", &tag);
    snprintf(name, sizeof(name), "%.*s", (int)(tag.len < 63 ? tag.len : 63), tag.base ? tag.base : "");
    return canal_res_status(req, canal_cache_evict_tag(the_app, name) == 0 ? 204 : 404);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-outputcacheapp: %s\n", err.message);
        return 2;
    }
    canal_app_t *app = the_app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    static const char *const vary[] = {"accept-language", "x-tenant", NULL}, *const news[] = {"news", NULL};
    static const canal_output_policy_t plain = {0}, by = {.vary = vary}, brief = {.ttl_ms = 30},
                                       tagged = {.tags = news}, anyone = {.allow_credentials = 1};
    static struct route routes[] = {
        {.name = "page", .header = "x-made", .value = "by the handler"},
        {.name = "vary"},
        {.name = "short"},
        {.name = "big", .size = 1500},
        {.name = "tagged"},
        {.name = "cookie", .header = "set-cookie", .value = "a=1; Path=/"},
        {.name = "private", .header = "cache-control", .value = "private, max-age=60"},
        {.name = "nostore", .header = "cache-control", .value = "no-store"},
        {.name = "missing", .status = 404},
        {.name = "post"},
        {.name = "anyone"}};
    const canal_output_policy_t *policy[] = {&plain, &by,    &brief, &plain, &tagged, &plain,
                                             &plain, &plain, &plain, &plain, &anyone};
    for (size_t i = 0; i < sizeof(routes) / sizeof(*routes); i++) {
        canal_endpoint_spec_t spec = {.method = i == 9 ? "POST" : "GET", .tmpl = routes[i].name, .handler = counted,
                                      .data = &routes[i], .options = {CANAL_OUTPUT_CACHE(policy[i])}};
        canal_app_route(app, &spec, NULL, NULL);
    }
    canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "evict", .handler = evict}, NULL, NULL);
    canal_app_output_cache(app, &(canal_output_cache_options_t){.max_bytes = 16 * 4096});
    canal_app_metrics(app, "metrics", NULL);
    if (canal_app_error(app, &err) != 0) {
        fprintf(stderr, "canal-outputcacheapp: %s\n", err.message);
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
