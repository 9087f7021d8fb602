/* SPDX-License-Identifier: MIT */
/*
 * canal-opsapp: a small app for test/e2e/ops.sh with what the demo does not have: a CORS
 * policy with credentials and a list of origins on "api", and a route with compression off.
 *
 *   GET, PUT, POST /api/me  JSON of 2 KiB, CORS (credentials) for https://a.example and
 *                           https://b.example, GET and PUT only
 *   GET /public        text of 2 KiB, no CORS, never compressed
 */
#include <stdio.h>
#include <string.h>
#include <canal.h>

static char filler[2048];

static int me(canal_req_t *req, void *data)
{
    canal_res_header(req, "x-request-count", "1");
    return canal_res_json_new(req, 200, json_pack("{s:s, s:s}", "name", "me", "filler", filler));
}

static int public(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/plain; charset=utf-8", filler, sizeof(filler) - 1);
}

int main(int argc, char **argv)
{
    static const canal_cors_t policy = {.origins = "https://a.example, https://b.example",
                                        .methods = "GET, PUT",
                                        .headers = "Authorization, Content-Type",
                                        .expose = "X-Request-Count",
                                        .credentials = 1,
                                        .max_age = 60};
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.threads = 1;
    if (canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(err.code == CANAL_EHELP ? stdout : stderr, "canal-opsapp: %s\n%s", err.message, canal_config_usage());
        return err.code == CANAL_EHELP ? 0 : 2;
    }
    memset(filler, 'a', sizeof(filler) - 1);
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL || canal_app_get(app, "api/me", me, NULL) != 0 || canal_app_put(app, "api/me", me, NULL) != 0 ||
        canal_app_post(app, "api/me", me, NULL) != 0 ||
        canal_app_get(app, "public", public, NULL) != 0 || canal_app_cors(app, "api", &policy) != 0 ||
        canal_app_compress(app, NULL) != 0 || canal_app_compress_route(app, "GET", "public", 0) != 0 ||
        canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    fprintf(stderr, "canal-opsapp listening on http://%s:%u\n", cfg.host, canal_app_port(app, 0));
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
