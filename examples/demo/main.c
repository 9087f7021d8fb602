/* SPDX-License-Identifier: MIT */
/*
 * canal-demo: the benchmark app of the articles canal started from.
 *
 *   GET /home/plaintext                      Hello, World!
 *   GET /home/json                           {"message":"Hello, World!"}
 *   GET /home/employee/{id}                  an employee, or a 404 problem
 *   GET /home/orders/{id}?customerid=&index=&size=   a page of orders (id 0: everyone's)
 *   GET /api/woo                             {"id":1,"name":"Woo"}
 *   GET /metrics                             Prometheus metrics
 *   GET /static/...                          files of examples/demo/static (--static-dir)
 *
 *   build/bin/canal-demo [--mode router|controller] [--data FILE] [--static-dir DIR|off]
 *                        [--metrics on|off] [--compress on|off] [--cors on|off]
 *                        [canal's flags: --host ...]
 *
 * Both modes answer the same bytes; only the way the app is written differs. Compression
 * (gzip from 1 KiB, when asked) and CORS (any origin, GET) are on for the demo's routes.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <canal.h>
#include "demo.h"
#include "northwind.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: canal-demo [--mode router|controller] [--data FILE] [--static-dir DIR|off]\n"
            "                  [--metrics on|off] [--compress on|off] [--cors on|off] [options]\n%s",
            canal_config_usage());
}

/* The static folder of the source tree: the binary is build/bin/canal-demo (or
 * build/asan/bin/...), so look two and three levels above it, then in the current directory. */
static const char *default_static_dir(char *buf, size_t size)
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
            snprintf(buf, size, "%s%s/examples/demo/static", exe, up[i]);
            if (access(buf, R_OK | X_OK) == 0)
                return buf;
        }
    }
    return "examples/demo/static";
}

/* "on" or "off" into *on; 0, or -1 for anything else */
static int on_off(const char *s, int *on)
{
    if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0)
        return -1;
    *on = strcmp(s, "on") == 0;
    return 0;
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
    if (strcmp(static_dir, "off") != 0 &&
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
    const char *mode = "router", *data = NULL, *static_dir = NULL;
    int metrics = 1, compress = 1, cors = 1;
    char dir[PATH_MAX + 32];

    canal_config_init(&cfg);
    cfg.access_log = "-";
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-demo: %s\n", err.message);
        usage();
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            data = argv[++i];
        } else if (strcmp(argv[i], "--static-dir") == 0 && i + 1 < argc) {
            static_dir = argv[++i];
        } else if (i + 1 < argc && ((strcmp(argv[i], "--metrics") == 0 && on_off(argv[i + 1], &metrics) == 0) ||
                                    (strcmp(argv[i], "--compress") == 0 && on_off(argv[i + 1], &compress) == 0) ||
                                    (strcmp(argv[i], "--cors") == 0 && on_off(argv[i + 1], &cors) == 0))) {
            i++;
        } else {
            usage();
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (strcmp(mode, "router") != 0 && strcmp(mode, "controller") != 0) {
        fprintf(stderr, "canal-demo: unknown --mode '%s'\n", mode);
        return 2;
    }
    if (northwind_load(data) != 0)
        return 1;

    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_mvc_t *mvc = NULL;
    int rc;
    if (strcmp(mode, "router") == 0) {
        rc = demo_router_mode(app, &err);
    } else {
        mvc = canal_mvc_create(app);
        rc = mvc ? demo_controller_mode(app, mvc, &err) : CANAL_ENOMEM;
    }
    if (rc == 0)
        rc = mount_ops(app, mvc, static_dir ? static_dir : default_static_dir(dir, sizeof(dir)), metrics, compress,
                       cors, &err);
    if (rc != 0) {
        fprintf(stderr, "canal-demo: %s\n", err.message);
        return 1;
    }
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    const char *host = canal_app_config(app)->host;
    unsigned port = canal_app_port(app, 0);
    fprintf(stderr, "canal-demo listening on http://%s:%u (%s mode, %u threads, %s); try:\n", host, port, mode,
            canal_app_config(app)->threads,
            canal_app_config(app)->env == CANAL_ENV_DEVELOPMENT ? "development" : "production");
    static const char *const urls[] = {"/home/plaintext", "/home/json", "/home/employee/3",
                                       "/home/orders/3?index=0&size=5", "/api/woo", "/static/"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        fprintf(stderr, "  http://%s:%u%s\n", host, port, urls[i]);
    if (canal_app_listener_tls(app, 1))
        fprintf(stderr, "and over TLS (HTTP/2 or HTTP/1.1): https://%s:%u/home/plaintext ...\n", host,
                canal_app_port(app, 1));
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    northwind_free();
    return rc == 0 ? 0 : 1;
}
