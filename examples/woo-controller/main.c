/* SPDX-License-Identifier: MIT */
/*
 * woo-controller: the smallest controller-mode program, the twin of woo-router. A Woo
 * controller with the prefix "api/[controller]" and one GET action: GET /api/woo answers
 * {"id":1,"name":"Woo"}.
 *
 *   build/bin/canal-woo-controller --port 8080
 */
#include <stdio.h>
#include <canal.h>

static int get(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_json_new(req, 200, json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
}

static const canal_action_def_t woo_actions[] = {
    {.name = "Get", .handler = get}, /* no template: the action answers at the prefix */
    {.name = NULL},
};

static const canal_controller_def_t woo = {.name = "Woo", .prefix = "api/[controller]", .actions = woo_actions};

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
    canal_mvc_t *mvc = app ? canal_mvc_create(app) : NULL;
    if (mvc == NULL || canal_mvc_add_controller(mvc, &woo, NULL, &err) != 0) {
        fprintf(stderr, "%s\n", mvc ? err.message : "out of memory");
        return 1;
    }
    if (canal_app_start(app) != 0)
        return 1;
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    int rc = canal_app_wait(app); /* until SIGINT or SIGTERM, then a graceful shutdown */
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    return rc == 0 ? 0 : 1;
}
