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
#include <stdlib.h>
#include <string.h>
#include "notes.h"

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err = {0};
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1; /* --db and --pool are the program's */
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(err.code == CANAL_EHELP ? stdout : stderr, "%s\n%s", err.message, canal_config_usage());
        if (err.code == CANAL_EHELP)
            printf("canal-notes:\n  --db URL    sqlite:PATH, sqlite::memory: or postgresql://... (default %s)\n"
                   "  --pool N    database connections per worker (SQLite: threads)\n",
                   NOTES_DEFAULT_DB);
        return err.code == CANAL_EHELP ? 0 : 2; /* --help, or a bad flag or variable */
    }
    const char *url = NULL;
    canal_db_options_t opt = {0};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 < argc && strcmp(argv[i], "--db") == 0) {
            url = argv[i + 1];
        } else if (i + 1 < argc && strcmp(argv[i], "--pool") == 0 && atoi(argv[i + 1]) > 0) {
            opt.pool_size = (unsigned)atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "canal-notes: unknown flag or bad value: %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    canal_app_t *app = canal_app_create(&cfg);
    canal_mvc_t *mvc = app ? canal_mvc_create(app) : NULL;
    if (mvc == NULL) {
        fprintf(stderr, "canal-notes: out of memory\n");
        return 1;
    }
    int rc = notes_db(app, url, &opt, &err);
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
