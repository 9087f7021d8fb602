/* SPDX-License-Identifier: MIT */
/*
 * todo: the program. Everything but main() is in todo.c, so that test/todo_test.c can run the
 * same routes in-process with canal/testing.h.
 *
 *   build/bin/canal-todo --port 8080
 */
#include <stdio.h>
#include "todo.h"

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    if (canal_config_load(&cfg, &argc, argv, &err) != 0) { /* --config FILE, CANAL_*, flags */
        fprintf(err.code == CANAL_EHELP ? stdout : stderr, "%s\n%s", err.message, canal_config_usage());
        return err.code == CANAL_EHELP ? 0 : 2; /* --help, or a bad file, variable or flag */
    }
    todo_store_t *store = todo_store_create();
    canal_app_t *app = store ? canal_app_create(&cfg) : NULL;
    if (app == NULL || todo_routes(app, store) != 0 || canal_app_start(app) != 0)
        return 1;
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    int rc = canal_app_wait(app); /* until SIGINT or SIGTERM, then a graceful shutdown */
    canal_app_destroy(app);
    todo_store_destroy(store);
    return rc == 0 ? 0 : 1;
}
