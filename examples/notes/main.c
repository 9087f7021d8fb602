/* SPDX-License-Identifier: MIT */
/*
 * notes: the program. Everything but main() is in notes.c, so that test/notes_test.c runs
 * the same routes in-process with canal/testing.h.
 *
 *   build/bin/canal-notes --port 8080                      data in ./notes.db (SQLite)
 *   build/bin/canal-notes --db sqlite::memory:             gone when it stops
 *   build/bin/canal-notes --db postgresql:///notes?host=/run/postgresql
 *   build/bin/canal-notes --db URL --pool 4                 connections (SQLite: threads)
 */
#include <stdio.h>
#include "notes.h"

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err = {0};
    canal_config_init(&cfg);
    const char *url;
    size_t pool;
    const canal_option_t options[] = {
        {"db", CANAL_OPTION_STRING, &url, NOTES_DEFAULT_DB, .meta = "URL",
         .help = "sqlite:PATH, sqlite::memory: or postgresql://..."},
        {"pool", CANAL_OPTION_NUMBER, &pool, "0", 0, 1024,
         .help = "database connections per worker (SQLite: threads); 0: canal_db's default"},
    };
    canal_config_options(&cfg, options, 2, &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1) {
        FILE *f = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(f, "%s\n", rc != 0 ? err.message : "canal-notes: no arguments but flags");
        canal_config_help(&cfg, 0, f);
        return rc == CANAL_EHELP ? 0 : 2; /* --help, or a bad file, variable or flag */
    }
    canal_db_options_t opt = {.pool_size = (unsigned)pool};
    canal_app_t *app = canal_app_create(&cfg);
    canal_mvc_t *mvc = app ? canal_mvc_create(app) : NULL;
    if (mvc == NULL) {
        fprintf(stderr, "canal-notes: out of memory\n");
        return 1;
    }
    rc = notes_db(app, url, &opt, &err);
    if (rc == 0)
        rc = notes_routes(app, mvc, &err);
    if (rc != 0 || (rc = canal_app_start(app)) != 0) {
        fprintf(stderr, "canal-notes: %s\n", err.code == rc ? err.message : canal_strerror(rc));
        return 1;
    }
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    rc = canal_app_wait(app); /* until SIGINT or SIGTERM, then a graceful shutdown */
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    return rc == 0 ? 0 : 1;
}
