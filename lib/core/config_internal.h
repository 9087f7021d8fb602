/* SPDX-License-Identifier: MIT */
/*
 * The table of canal's settings (config.c), for the functions that walk it and for
 * test/unit/config_test.c, which checks every row.
 */
#ifndef CANAL_CONFIG_INTERNAL_H
#define CANAL_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "canal/app.h"

enum canal__opt_kind {
    CANAL__OPT_STR,     /* const char *, not empty */
    CANAL__OPT_STR_OFF, /* const char *, not empty; "off" is NULL */
    CANAL__OPT_PROXIES, /* CANAL__OPT_STR_OFF that canal__proxies_parse() accepts */
    CANAL__OPT_LISTEN,  /* CANAL__OPT_STR_OFF of the form "unix:PATH" */
    CANAL__OPT_MODE,    /* unsigned, a file mode written in octal, at most max */
    CANAL__OPT_U16,     /* uint16_t in [min, max] */
    CANAL__OPT_UINT,    /* unsigned in [min, max] */
    CANAL__OPT_SIZE,    /* size_t in [min, max] */
    CANAL__OPT_CHOICE   /* an int-sized enum: the index of the value in choices[] */
};

/* One setting. Its environment variable is derived from flag (canal__config_env_name()). */
struct canal__option {
    const char *flag;          /* without "--" */
    enum canal__opt_kind kind;
    size_t offset, size;       /* the field in canal_config_t (size: checked by the tests) */
    const char *meta;          /* what the value is, in the usage text ("N", "MS", "on|off") */
    uint64_t def, min, max;    /* numbers and choices (def: the index) */
    const char *def_str;       /* strings */
    const char *choices[4];    /* CANAL__OPT_CHOICE: NULL-terminated */
    const char *help;          /* a few words, in the usage text and the docs table */
    void *ptr;                 /* an app's option (canal_option_t): its variable; offset unused */
};

/* the table (config.c) and its number of rows in *n */
const struct canal__option *canal__config_options(size_t *n);

/* Row i of cfg's settings: canal's table, then cfg->options (an app's, converted, its value
 * going to its variable). 0, or -1 past the last row. */
int canal__config_row(const canal_config_t *cfg, size_t i, struct canal__option *o);

/* Reads the JSON file at path into cfg (canal_config_from_file()), leaving its document in
 * *doc (NULL on failure): cfg's strings from the file point into it until json_decref(). */
int canal__config_file(canal_config_t *cfg, const char *path, void **doc, canal_error_info_t *err);

/* The value of an app's option, by its type */
union canal__value {
    const char *s;
    size_t n;
    int b;
};
#define CANAL__MAX_APP_OPTIONS 64

/* What canal_config_load() keeps for a reload (canal_app_reload()): its command line as given,
 * and what it read before the app changed anything (cfg.options: the app's variables; values:
 * what they were) */
struct canal__loaded {
    int argc;
    char **argv;
    canal_config_t base; /* cfg as the app had set it when canal_config_load() began: a
                          * reload starts from it (the app's own settings in code stay) */
    canal_config_t cfg;
    union canal__value values[CANAL__MAX_APP_OPTIONS];
};

/* "CANAL_MAX_BODY" for "max-body", into buf (64 bytes are plenty). Returns buf. */
const char *canal__config_env_name(const struct canal__option *o, char *buf, size_t size);

/* The table of docs/server.md ("Configuration") in markdown; 0, or -1 if size is too small. */
int canal__config_markdown(char *buf, size_t size);

#endif
