/* SPDX-License-Identifier: MIT */
/*
 * woo-router: the smallest complete router-mode program, the C twin of ASP.NET Core's
 * router.MapGet("api/woo", ...). GET /api/woo answers {"id":1,"name":"Woo"}.
 *
 *   build/bin/canal-woo-router --port 8080
 */
#include <stdio.h>
#include <canal.h>

static int woo(canal_req_t *req, void *data)
{
    return canal_res_json_new(req, 200, json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    if (canal_config_load(&cfg, &argc, argv, &err) != 0) { /* --config FILE, CANAL_*, flags */
        fprintf(err.code == CANAL_EHELP ? stdout : stderr, "%s\n%s", err.message, canal_config_usage());
        return err.code == CANAL_EHELP ? 0 : 2; /* --help, or a bad file, variable or flag */
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL || canal_app_get(app, "api/woo", woo, NULL) != 0)
        return 1;
    if (canal_app_start(app) != 0)
        return 1;
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    int rc = canal_app_wait(app); /* until SIGINT or SIGTERM, then a graceful shutdown */
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
