/* SPDX-License-Identifier: MIT */
/*
 * notes: the program. Everything but main() is in notes.c, so that test/notes_test.c runs
 * the same routes in-process with canal/testing.h.
 *
 *   build/bin/canal-notes --port 8080
 */
#include <stdio.h>
#include "notes.h"

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err = {0};
    canal_config_init(&cfg);
    if (canal_config_load(&cfg, &argc, argv, &err) != 0) { /* --config FILE, CANAL_*, flags */
        fprintf(err.code == CANAL_EHELP ? stdout : stderr, "%s\n%s", err.message, canal_config_usage());
        return err.code == CANAL_EHELP ? 0 : 2; /* --help, or a bad file, variable or flag */
    }
    notes_store_t *store = notes_store_create();
    canal_app_t *app = store ? canal_app_create(&cfg) : NULL;
    canal_mvc_t *mvc = app ? canal_mvc_create(app) : NULL;
    if (mvc == NULL) {
        fprintf(stderr, "canal-notes: out of memory\n");
        return 1;
    }
    int rc = notes_routes(app, mvc, store, &err);
    if (rc != 0 || (rc = canal_app_start(app)) != 0) {
        fprintf(stderr, "canal-notes: %s\n", err.code == rc ? err.message : canal_strerror(rc));
        return 1;
    }
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    rc = canal_app_wait(app); /* until SIGINT or SIGTERM, then a graceful shutdown */
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    notes_store_destroy(store);
    return rc == 0 ? 0 : 1;
}
