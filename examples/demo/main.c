/* SPDX-License-Identifier: MIT */
/*
 * canal-demo: the benchmark app of the articles canal started from.
 *
 *   GET /home/plaintext                      Hello, World!
 *   GET /home/json                           {"message":"Hello, World!"}
 *   GET /home/employee/{id}                  an employee, or a 404 problem
 *   GET /home/orders/{id}?customerid=&index=&size=   a page of orders (id 0: everyone's)
 *   GET /home/orders.ndjson                  every order, one per line, streamed as read
 *   GET /api/woo                             {"id":1,"name":"Woo"}
 *   GET /home/secret                         {"message":"..."} with the X-Api-Key of --api-key FILE;
 *                                            401 without it (no --api-key: always 401)
 *   GET /openapi.json                        the OpenAPI 3.1 document of the routes above
 *   GET /docs                                the same, rendered by Swagger UI
 *   GET /health/live, /health/ready          liveness; readiness (503 once stopping)
 *   GET /metrics                             Prometheus metrics
 *   GET /static/...                          files of examples/demo/static (--static-dir)
 *   GET /home/employees                      an HTML page: examples/demo/views (--views-dir); with an
 *                                            ETag, and kept 60 s by the output cache in production
 *
 * Every answer carries an X-Request-Id (--request-id off to leave it out).
 *   build/bin/canal-demo [--mode router|controller] [--data FILE] [--static-dir DIR|off] [--views-dir DIR]
 *                        [--metrics on|off] [--compress on|off] [--cors on|off]
 *                        [canal's flags: --host ...]
 *
 * Both modes answer the same bytes; only the way the app is written differs. Compression
 * (gzip from 1 KiB, when asked) and CORS (any origin, GET) are on for the demo's routes.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <canal.h>
#include "demo.h"
#include "northwind.h"

/* Where `make npm` installs Swagger UI (the Makefile passes the build tree's directory). */
#ifndef DEMO_SWAGGER_UI
#define DEMO_SWAGGER_UI "build/npm/node_modules/swagger-ui-dist"
#endif


/* The OpenAPI document at /openapi.json (controller mode: with what the actions declare) and
 * the page that renders it at /docs. Registered last, so that the document sees every route. */
static int serve_openapi(canal_app_t *app, canal_mvc_t *mvc, const char *mode, const char *swagger_ui)
{
    canal_error_info_t err;
    int rc = canal_app_docs(app, "/docs", "/openapi.json", swagger_ui, &err);
    if (rc == CANAL_ENOTFOUND)
        fprintf(stderr, "canal-demo: /docs will answer 503: %s\n", err.message);
    else if (rc != 0)
        return fprintf(stderr, "canal-demo: /docs: %s\n", err.message), rc;
    char description[160];
    snprintf(description, sizeof(description),
             "The benchmark app of the articles canal started from, in %s mode.", mode);
    canal_openapi_info_t info = {.title = "canal demo", .version = CANAL_VERSION, .license = "MIT",
                                 .description = description};
    json_t *doc = mvc ? canal_mvc_openapi(mvc, &info) : canal_openapi_build(app, &info, NULL, NULL);
    if ((rc = canal_app_openapi(app, "/openapi.json", doc, &err)) != 0)
        fprintf(stderr, "canal-demo: /openapi.json: %s\n", err.message);
    return rc;
}

/* A folder of examples/demo in the source tree (static, views): the binary is
 * build/bin/canal-demo (or build/asan/bin/...), so look two and three levels above it, then in
 * the current directory. */
static const char *demo_dir(const char *leaf, char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL)
            *slash = '\0';
        static const char *const up[] = {"/../..", "/../../.."};
        for (size_t i = 0; i < 2; i++) {
            snprintf(buf, size, "%s%s/examples/demo/%s", exe, up[i], leaf);
            if (access(buf, R_OK | X_OK) == 0)
                return buf;
        }
    }
    snprintf(buf, size, "examples/demo/%s", leaf);
    return buf;
}

/* The operations side: metrics, static files, compression, CORS (docs/operations.md). */
static int mount_ops(canal_app_t *app, canal_mvc_t *mvc, const char *static_dir, int metrics, int compress,
                     int cors, canal_error_info_t *err)
{
    /* any origin may read the demo's answers with GET; preflights are cached for 10 minutes */
    static const canal_cors_t policy = {.origins = "*", .methods = "GET, HEAD", .headers = "Content-Type",
                                        .max_age = 600};
    int rc;
    if (metrics && (rc = canal_app_metrics(app, "metrics", err)) != 0)
        return rc;
    if (static_dir != NULL &&
        (rc = canal_app_static(app, "/static", static_dir, CANAL_STATIC_GZIP | CANAL_STATIC_INDEX, err)) != 0)
        return rc;
    if (compress && (rc = canal_app_compress(app, NULL)) != 0)
        return rc;
    if (!cors)
        return 0;
    /* router mode: by route prefix; controller mode: a filter on every controller */
    if (mvc == NULL) {
        if ((rc = canal_app_cors(app, "home", &policy)) == 0)
            rc = canal_app_cors(app, "api", &policy);
    } else {
        canal_filter_t f = canal_cors_filter(&policy);
        rc = canal_mvc_filter(mvc, &f);
    }
    if (rc != 0 && err != NULL)
        snprintf(err->message, sizeof(err->message), "CORS: %s", canal_strerror(rc));
    return rc;
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    /* The demo's own options, beside canal's: each has its flag, its CANAL_ variable
     * (--swagger-ui: CANAL_SWAGGER_UI), its key in a --config file and a line in --help. */
    const char *mode, *data, *swagger_ui, *static_dir, *views_dir, *api_key;
    int list_routes, metrics, compress, cors;
    const canal_option_t options[] = {
        {"mode", CANAL_OPTION_STRING, &mode, "router", .meta = "router|controller", .help = "how the routes are made"},
        {"data", CANAL_OPTION_STRING, &data, NULL, .meta = "FILE", .help = "Northwind JSON; none: built in"},
        {"swagger-ui", CANAL_OPTION_STRING, &swagger_ui, NULL, .meta = "DIR", .help = "swagger-ui-dist for /docs"},
        {"routes", CANAL_OPTION_SWITCH, &list_routes, NULL, .help = "print the route table and exit"},
        {"static-dir", CANAL_OPTION_STRING, &static_dir, "auto", .meta = "DIR|auto|off",
         .help = "/static's files; auto: examples/demo/static"},
        {"views-dir", CANAL_OPTION_STRING, &views_dir, "auto", .meta = "DIR|auto",
         .help = "page templates; auto: examples/demo/views"},
        {"metrics", CANAL_OPTION_SWITCH, &metrics, "on", .help = "GET /metrics"},
        {"compress", CANAL_OPTION_SWITCH, &compress, "on", .help = "gzip answers"},
        {"cors", CANAL_OPTION_SWITCH, &cors, "on", .help = "CORS on /home and /api"},
        {"api-key", CANAL_OPTION_STRING, &api_key, NULL, .meta = "FILE",
         .help = "GET /home/secret's key; none: random"},
    };
    char dir[PATH_MAX + 32];

    canal_config_init(&cfg);
    cfg.access_log = "-";
    cfg.request_id = 1;
    canal_config_options(&cfg, options, sizeof(options) / sizeof(options[0]), &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1) {
        FILE *to = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(to, "%s\n", rc != 0 ? err.message : "canal-demo: no arguments but flags");
        canal_config_help(&cfg, 0, to);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    if (strcmp(mode, "router") != 0 && strcmp(mode, "controller") != 0) {
        fprintf(stderr, "canal-demo: unknown --mode '%s'\n", mode);
        return 2;
    }
    if (swagger_ui == NULL || *swagger_ui == '\0')
        swagger_ui = DEMO_SWAGGER_UI;
    if (northwind_load(data) != 0)
        return 1;
    /* GET /home/secret's scheme: the key from the file, or 32 random bytes nobody knows */
    canal_str_t key = {NULL, 0};
    unsigned char random_key[32];
    if (api_key != NULL && canal_secret_read(api_key, &key, &err) != 0) {
        fprintf(stderr, "canal-demo: --api-key: %s\n", err.message);
        return 2;
    }
    if (key.base == NULL && getentropy(random_key, sizeof(random_key)) == 0)
        key = (canal_str_t){(const char *)random_key, sizeof(random_key)};
    canal_auth_t *key_scheme = canal_auth_api_key(
        &(canal_api_key_config_t){.key = key.base, .key_len = key.len, .subject = "demo", .realm = "canal-demo"}, &err);
    if (key_scheme == NULL) {
        fprintf(stderr, "canal-demo: the API key scheme: %s\n", err.message);
        return 1;
    }
    demo_key_policy.schemes[0] = key_scheme;

    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_mvc_t *mvc = NULL;
    if (strcmp(mode, "router") == 0) {
        rc = demo_router_mode(app, &err);
    } else {
        mvc = canal_mvc_create(app);
        rc = mvc ? demo_controller_mode(app, mvc, &err) : CANAL_ENOMEM;
    }
    char vdir[PATH_MAX + 32];
    if (rc == 0)
        rc = demo_views(app, views_dir != NULL && strcmp(views_dir, "auto") != 0 ? views_dir : demo_dir("views", vdir, sizeof(vdir)), &err);
    if (rc == 0 && (rc = canal_app_health(app, "/health", NULL, NULL)) != 0)
        snprintf(err.message, sizeof(err.message), "health endpoints: %s", canal_strerror(rc));
    if (rc == 0)
        rc = mount_ops(app, mvc,
                       static_dir != NULL && strcmp(static_dir, "auto") == 0 ? demo_dir("static", dir, sizeof(dir))
                                                                              : static_dir,
                       metrics, compress, cors, &err);
    if (rc != 0) {
        fprintf(stderr, "canal-demo: %s\n", err.message);
        return 1;
    }
    if ((rc = serve_openapi(app, mvc, mode, swagger_ui)) != 0)
        return 1;
    if (list_routes) { /* the route table, "METHOD TEMPLATE [NAME]" a line, for tests */
        const canal_router_t *r = canal_app_router(app);
        size_t n = canal_router_list(r, NULL, 0);
        char *buf = malloc(n + 1);
        if (buf != NULL)
            canal_router_list(r, buf, n + 1), fputs(buf, stdout);
        free(buf);
        canal_app_destroy(app);
        canal_mvc_destroy(mvc);
        northwind_free();
        canal_auth_destroy(key_scheme);
        if (api_key != NULL)
            canal_secret_free(&key);
        return buf ? 0 : 1;
    }
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    const char *addr = canal_app_listener_addr(app, 0);
    int on_unix = strncmp(addr, "unix:", 5) == 0; /* --listen unix:PATH */
    fprintf(stderr, "canal-demo listening on %s%s (%s mode, %u threads, %s); try:\n", on_unix ? "" : "http://", addr,
            mode, canal_app_config(app)->threads,
            canal_app_config(app)->env == CANAL_ENV_DEVELOPMENT ? "development" : "production");
    static const char *const urls[] = {"/home/plaintext", "/home/json", "/home/employee/3",
                                       "/home/orders/3?index=0&size=5", "/home/employees", "/api/woo",
                                       "/openapi.json", "/docs",
                                       "/health/ready", "/metrics", "/static/"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        fprintf(stderr, on_unix ? "  curl --unix-socket %s http://localhost%s\n" : "  http://%s%s\n",
                on_unix ? addr + 5 : addr, urls[i]);
    const char *host = canal_app_config(app)->host;
    if (canal_app_listener_tls(app, 1))
        fprintf(stderr, "and over TLS (HTTP/2 or HTTP/1.1): https://%s:%u/home/plaintext ...\n", host,
                canal_app_port(app, 1));
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    northwind_free();
    canal_auth_destroy(key_scheme);
    if (api_key != NULL)
        canal_secret_free(&key);
    return rc == 0 ? 0 : 1;
}
