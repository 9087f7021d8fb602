/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the configuration table (lib/core/config.c): every row is checked, every
 * flag parses its smallest and largest value (and refuses one past them), every flag's
 * environment variable is read, unknown flags and --help have their own outcomes, the usage
 * text names every flag, and the table in docs/server.md is the one the code generates.
 *
 * `config_test --markdown` prints that table (make config-table puts it into the docs).
 */
#include "test.h"
#include <canal.h>
#include "core/config_internal.h"

static size_t noptions;
static const struct canal__option *options;
#define ROWS for (const struct canal__option *o = options; o < options + noptions; o++)

static void *field(canal_config_t *cfg, const struct canal__option *o)
{
    return (char *)cfg + o->offset;
}

/* A number field's value (a choice: its index). */
static uint64_t number(canal_config_t *cfg, const struct canal__option *o)
{
    switch (o->kind) {
    case CANAL__OPT_U16: return *(uint16_t *)field(cfg, o);
    case CANAL__OPT_UINT:
    case CANAL__OPT_MODE: return *(unsigned *)field(cfg, o);
    case CANAL__OPT_SIZE: return *(size_t *)field(cfg, o);
    case CANAL__OPT_CHOICE: return (uint64_t)*(int *)field(cfg, o);
    default: fail_msg("--%s is not a number", o->flag); return 0;
    }
}

static const char *string(canal_config_t *cfg, const struct canal__option *o)
{
    return *(const char **)field(cfg, o);
}

static int is_number(const struct canal__option *o)
{
    return o->kind == CANAL__OPT_U16 || o->kind == CANAL__OPT_UINT || o->kind == CANAL__OPT_SIZE;
}

static int is_string_kind(const struct canal__option *o)
{
    return o->kind == CANAL__OPT_STR || o->kind == CANAL__OPT_STR_OFF || o->kind == CANAL__OPT_PROXIES ||
           o->kind == CANAL__OPT_LISTEN;
}

static void table_rows(void **state)
{
    ROWS {
        size_t size = o->kind == CANAL__OPT_U16    ? sizeof(uint16_t)
                      : o->kind == CANAL__OPT_UINT || o->kind == CANAL__OPT_MODE ? sizeof(unsigned)
                      : o->kind == CANAL__OPT_SIZE   ? sizeof(size_t)
                      : o->kind == CANAL__OPT_CHOICE ? sizeof(int)
                                                     : sizeof(const char *);
        if (o->size != size || o->offset + o->size > sizeof(canal_config_t))
            fail_msg("--%s: its kind does not fit its field", o->flag);
        assert_true(o->help != NULL && o->help[0] != '\0');
        if (is_number(o) || o->kind == CANAL__OPT_MODE)
            assert_true(o->min <= o->def && o->def <= o->max);
        assert_non_null(o->meta);
        if (o->kind == CANAL__OPT_CHOICE) { /* two or three, NULL-terminated; the default one of them */
            size_t n = 0;
            while (n < 4 && o->choices[n] != NULL)
                n++;
            assert_true(n >= 2 && n <= 3 && o->def < n);
        }
        for (const struct canal__option *p = options; p < o; p++)
            if (strcmp(p->flag, o->flag) == 0 || p->offset == o->offset)
                fail_msg("--%s and --%s share a name or a field", p->flag, o->flag);
    }
}

static void defaults(void **state)
{
    canal_config_t cfg;
    memset(&cfg, 0xab, sizeof(cfg));
    canal_config_init(&cfg);
    ROWS {
        if (is_string_kind(o)) {
            if (o->def_str == NULL)
                assert_null(string(&cfg, o));
            else
                assert_string_equal(string(&cfg, o), o->def_str);
        } else {
            assert_int_equal(number(&cfg, o), o->def);
        }
    }
    /* the fields that are set in code only */
    assert_int_equal(cfg.no_signals, 0);
    assert_int_equal(cfg.allow_unknown_flags, 0);
    assert_null(cfg.log);
    assert_null(cfg.log_data);
    assert_int_equal(cfg.router.case_sensitive, 0);
    /* a few by name, so that a wrong row shows here too */
    assert_string_equal(cfg.host, "127.0.0.1");
    assert_int_equal(cfg.port, 8080);
    assert_int_equal(cfg.max_body_size, 1024 * 1024);
    assert_int_equal(cfg.request_timeout_ms, 30000);
}

/* Sets "--flag value" on a fresh configuration (as two arguments, or as one with '=' when
 * joined); returns what canal_config_from_args() returned, and err. */
static int parse_one(canal_config_t *cfg, const struct canal__option *o, const char *value, int joined,
                     canal_error_info_t *err)
{
    static char flag[192]; /* the config's strings point into argv: it outlives the call */
    char *argv[4] = {"prog", flag, (char *)value, NULL};
    int argc = 3;
    if (joined) {
        snprintf(flag, sizeof(flag), "--%s=%s", o->flag, value);
        argv[2] = NULL;
        argc = 2;
    } else {
        snprintf(flag, sizeof(flag), "--%s", o->flag);
    }
    canal_config_init(cfg);
    int rc = canal_config_from_args(cfg, &argc, argv, err);
    if (rc == 0)
        assert_int_equal(argc, 1);
    return rc;
}

/* A value a string row accepts. */
static const char *good_string(const struct canal__option *o)
{
    return o->kind == CANAL__OPT_PROXIES  ? "10.0.0.0/8, ::1, unix"
           : o->kind == CANAL__OPT_LISTEN ? "unix:/run/app/http.sock"
                                          : "some-value";
}

/* Tries value on row o: ok, it must set the field to expected (a number or a choice's index;
 * a string row: value itself); not ok, it must be refused. */
typedef void (*try_fn)(const struct canal__option *o, const char *value, uint64_t expected, int ok);

/* Calls try() with every value worth trying on row o: the smallest and the largest numbers,
 * one past each, junk; every choice; a string, "off"; and an empty value. */

static void each_value(const struct canal__option *o, try_fn try)
{
    char v[32];
    if (is_number(o)) {
        snprintf(v, sizeof(v), "%llu", (unsigned long long)o->min);
        try(o, v, o->min, 1);
        snprintf(v, sizeof(v), "%llu", (unsigned long long)o->max);
        try(o, v, o->max, 1);
        snprintf(v, sizeof(v), "%llu", (unsigned long long)o->max + 1);
        try(o, v, 0, 0);
        if (o->min > 0) {
            snprintf(v, sizeof(v), "%llu", (unsigned long long)o->min - 1);
            try(o, v, 0, 0);
        }
        try(o, "12x", 0, 0);
        try(o, "-1", 0, 0);
    } else if (o->kind == CANAL__OPT_MODE) { /* octal */
        try(o, "0", 0, 1);
        try(o, "0660", 0660, 1);
        try(o, "777", 0777, 1);
        try(o, "1000", 0, 0);
        try(o, "0778", 0, 0);
        try(o, "-1", 0, 0);
        try(o, "rw", 0, 0);
    } else if (o->kind == CANAL__OPT_CHOICE) {
        for (int i = 0; o->choices[i] != NULL; i++)
            try(o, o->choices[i], (uint64_t)i, 1);
        try(o, "maybe", 0, 0);
    } else {
        try(o, good_string(o), 0, 1);
        try(o, "off", 0, 1); /* "off" is NULL for STR_OFF and PROXIES, a value for STR */
        if (o->kind == CANAL__OPT_PROXIES)
            try(o, "10.0.0.0/99", 0, 0);
        if (o->kind == CANAL__OPT_LISTEN) { /* unix:PATH only, PATH 1 to 107 bytes */
            char longest[128] = "unix:", over[128] = "unix:";
            memset(longest + 5, 'a', 107);
            memset(over + 5, 'a', 108);
            try(o, longest, 0, 1);
            try(o, over, 0, 0);
            try(o, "unix:", 0, 0);
            try(o, "127.0.0.1:8080", 0, 0);
        }
    }
    try(o, "", 0, 0);
}

/* After who (a flag or a variable) was given value and the parser returned rc: ok, rc is 0
 * and the field says what value said (expected, for a number or a choice); not ok, rc is
 * CANAL_EINVAL and the message starts with "who:". */
static void assert_outcome(canal_config_t *cfg, const struct canal__option *o, const char *who, const char *value,
                           int rc, const canal_error_info_t *err, uint64_t expected, int ok)
{
    if (ok && rc != 0)
        fail_msg("%s %s: %d (%s)", who, value, rc, err->message);
    if (!ok && (rc != CANAL_EINVAL || err->code != CANAL_EINVAL))
        fail_msg("%s '%s' was taken", who, value);
    if (!ok && (strncmp(err->message, who, strlen(who)) != 0 || err->message[strlen(who)] != ':'))
        fail_msg("%s '%s' says [%s]", who, value, err->message);
    if (!ok)
        return;
    if (is_number(o) || o->kind == CANAL__OPT_CHOICE || o->kind == CANAL__OPT_MODE) {
        if (number(cfg, o) != expected)
            fail_msg("%s %s set %llu", who, value, (unsigned long long)number(cfg, o));
    } else if (strcmp(value, "off") == 0 && o->kind != CANAL__OPT_STR) {
        assert_null(string(cfg, o));
    } else {
        assert_string_equal(string(cfg, o), value);
    }
}

static void try_flag(const struct canal__option *o, const char *value, uint64_t expected, int ok)
{
    char flag[64];
    snprintf(flag, sizeof(flag), "--%s", o->flag);
    for (int joined = 0; joined < 2; joined++) {
        canal_config_t cfg;
        canal_error_info_t err;
        int rc = parse_one(&cfg, o, value, joined, &err);
        assert_outcome(&cfg, o, flag, value, rc, &err, expected, ok);
    }
}

static void each_flag(void **state)
{
    ROWS each_value(o, try_flag);
    /* a missing value, at the end or before another flag */
    canal_config_t cfg;
    canal_error_info_t err;
    char *argv[] = {"prog", "--host", "--port", "80", NULL};
    int argc = 4;
    canal_config_init(&cfg);
    assert_int_equal(canal_config_from_args(&cfg, &argc, argv, &err), CANAL_EINVAL);
    assert_string_equal(err.message, "--host: bad value '(missing)' (not empty)");
    char *last[] = {"prog", "--port", NULL};
    argc = 2;
    assert_int_equal(canal_config_from_args(&cfg, &argc, last, NULL), CANAL_EINVAL);
}

static void try_env(const struct canal__option *o, const char *value, uint64_t expected, int ok)
{
    char name[64];
    canal_config_t cfg;
    canal_error_info_t err;
    canal__config_env_name(o, name, sizeof(name));
    setenv(name, value, 1);
    canal_config_init(&cfg);
    int rc = canal_config_from_env(&cfg, &err);
    unsetenv(name);
    assert_outcome(&cfg, o, name, value, rc, &err, expected, ok);
}

static void each_env_var(void **state)
{
    char name[64];
    ROWS {
        canal__config_env_name(o, name, sizeof(name));
        assert_null(getenv(name)); /* the test's own environment must not decide */
        each_value(o, try_env);
    }
    const struct canal__option *body = NULL;
    ROWS if (strcmp(o->flag, "max-body") == 0) body = o;
    assert_string_equal(canal__config_env_name(body, name, sizeof(name)), "CANAL_MAX_BODY");
}

static void unknown_flags(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    char *argv[] = {"prog", "file", "--prot", "9000", NULL};
    int argc = 4;
    canal_config_init(&cfg);
    assert_int_equal(canal_config_from_args(&cfg, &argc, argv, &err), CANAL_EINVAL);
    assert_int_equal(err.code, CANAL_EINVAL);
    assert_string_equal(err.message, "unknown flag --prot; see --help");
    char *joined[] = {"prog", "--port=1", "--prot=9000", NULL};
    argc = 3;
    assert_int_equal(canal_config_from_args(&cfg, &argc, joined, &err), CANAL_EINVAL);
    assert_string_equal(err.message, "unknown flag --prot; see --help");
    argc = 3;
    assert_int_equal(canal_config_from_args(&cfg, &argc, joined, NULL), CANAL_EINVAL);

    /* opted out: the app's flags stay, in order, with their values */
    char *app[] = {"prog", "--mode", "x", "--port", "81", "--prot", "y", NULL};
    argc = 7;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1;
    assert_int_equal(canal_config_from_args(&cfg, &argc, app, &err), 0);
    assert_int_equal(cfg.port, 81);
    assert_int_equal(argc, 5);
    assert_string_equal(app[1], "--mode");
    assert_string_equal(app[2], "x");
    assert_string_equal(app[3], "--prot");
    assert_string_equal(app[4], "y");
    assert_null(app[5]);

    /* after "--", nothing is canal's: "--" and what follows stay as they are */
    char *rest[] = {"prog", "--port", "82", "a", "--", "--port", "83", "--prot", "--help", NULL};
    argc = 9;
    canal_config_init(&cfg);
    assert_int_equal(canal_config_from_args(&cfg, &argc, rest, &err), 0);
    assert_int_equal(cfg.port, 82);
    assert_int_equal(argc, 7);
    static const char *const left[] = {"prog", "a", "--", "--port", "83", "--prot", "--help"};
    for (int i = 0; i < 7; i++)
        assert_string_equal(rest[i], left[i]);
    assert_null(rest[7]);
}

static void help(void **state)
{
    static const char *const asks[][5] = {
        {"./prog", "--help", NULL},
        {"./prog", "--port", "1", "-h", NULL},
        {"./prog", "--prot", "9", "--help", NULL}, /* asking for help beats a typo */
    };
    for (size_t k = 0; k < sizeof(asks) / sizeof(asks[0]); k++) {
        canal_config_t cfg;
        canal_error_info_t err;
        char *argv[5];
        int argc = 0;
        for (; asks[k][argc] != NULL; argc++)
            argv[argc] = (char *)asks[k][argc];
        argv[argc] = NULL;
        int n = argc;
        canal_config_init(&cfg);
        assert_int_equal(canal_config_from_args(&cfg, &argc, argv, &err), CANAL_EHELP);
        assert_int_equal(err.code, CANAL_EHELP);
        assert_string_equal(err.message, "usage: ./prog [options]");
        assert_int_equal(argc, n); /* argv and cfg as they were */
        for (int i = 0; i < n; i++)
            assert_string_equal(argv[i], asks[k][i]);
        assert_int_equal(cfg.port, 8080);
        assert_int_equal(canal_config_from_args(&cfg, &argc, argv, NULL), CANAL_EHELP);
    }
    assert_string_equal(canal_err_name(CANAL_EHELP), "CANAL_EHELP");
}

static void usage(void **state)
{
    const char *u = canal_config_usage();
    assert_ptr_equal(u, canal_config_usage()); /* static */
    ROWS {
        char flag[64], name[64], env[80];
        snprintf(flag, sizeof(flag), "  --%s ", o->flag);
        snprintf(env, sizeof(env), "\n      %s; default ", canal__config_env_name(o, name, sizeof(name)));
        if (strstr(u, flag) == NULL || strstr(u, env) == NULL)
            fail_msg("the usage text does not show --%s and its variable", o->flag);
    }
    /* two lines a flag, none wider than a terminal */
    size_t lines = 0;
    for (const char *p = u; *p != '\0'; lines++) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        if (nl - p > 79)
            fail_msg("a usage line of %d columns: %.*s", (int)(nl - p), (int)(nl - p), p);
        p = nl + 1;
    }
    assert_int_equal(lines, 2 * noptions);
}

static char table[16384];

/* The docs table is the generated one: between its two markers in docs/server.md. */
static void docs_table(void **state)
{
    static const char begin[] = "<!-- config-table: generated by `make config-table` -->\n",
                      end[] = "<!-- end of config-table -->\n";
    assert_int_equal(canal__config_markdown(table, 100), -1); /* too small: said so */
    assert_int_equal(canal__config_markdown(table, sizeof(table)), 0);
    FILE *f = fopen("docs/server.md", "r"); /* test/run runs from the top of the tree */
    if (f == NULL)
        fail_msg("docs/server.md not found: run this test from the top of the tree");
    static char doc[256 * 1024];
    size_t n = fread(doc, 1, sizeof(doc) - 1, f);
    fclose(f);
    doc[n] = '\0';
    char *b = strstr(doc, begin), *e = b ? strstr(b, end) : NULL;
    if (b == NULL || e == NULL)
        fail_msg("docs/server.md has no config-table markers");
    b += strlen(begin);
    *e = '\0';
    if (strcmp(b, table) != 0)
        fail_msg("docs/server.md's table is not the generated one: run make config-table");
}

/* The app's own options (canal_config_options()) */

static const char *o_dir;
static size_t o_count;
static int o_fast;
static const canal_option_t app_options[] = {
    {"data-dir", CANAL_OPTION_STRING, &o_dir, "data", .meta = "DIR", .help = "where the data is"},
    {"item-count", CANAL_OPTION_NUMBER, &o_count, "10", .min = 1, .max = 100, .help = "items per page"},
    {"fast", CANAL_OPTION_SWITCH, &o_fast, NULL, .help = "skip the checks"},
};

static void app_config(canal_config_t *cfg)
{
    canal_config_init(cfg);
    canal_error_info_t err;
    assert_int_equal(canal_config_options(cfg, app_options, 3, &err), 0);
}

static void app_option_defaults_and_flags(void **state)
{
    canal_config_t cfg;
    o_dir = NULL, o_count = 0, o_fast = 1;
    app_config(&cfg);
    assert_string_equal(o_dir, "data");
    assert_int_equal(o_count, 10);
    assert_int_equal(o_fast, 0);
    char *argv[] = {"app", "--data-dir", "/srv", "--item-count=100", "--fast", "on", "--port", "9", "x", NULL};
    int argc = 9;
    canal_error_info_t err;
    assert_int_equal(canal_config_from_args(&cfg, &argc, argv, &err), 0);
    assert_string_equal(o_dir, "/srv");
    assert_int_equal(o_count, 100);
    assert_int_equal(o_fast, 1);
    assert_int_equal(cfg.port, 9);
    assert_int_equal(argc, 2);
    assert_string_equal(argv[1], "x");
    /* the same strict parsing as canal's: out of range, not a switch value */
    char *bad[] = {"app", "--item-count", "101", NULL};
    argc = 3;
    assert_int_equal(canal_config_from_args(&cfg, &argc, bad, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "--item-count: bad value '101' (1 to 100)"));
    char *bad2[] = {"app", "--fast", "yes", NULL};
    argc = 3;
    assert_int_equal(canal_config_from_args(&cfg, &argc, bad2, &err), CANAL_EINVAL);
    /* an on|off flag alone is on: last, or before another flag */
    o_fast = 0;
    char *bare[] = {"app", "--fast", NULL};
    argc = 2;
    assert_int_equal(canal_config_from_args(&cfg, &argc, bare, &err), 0);
    assert_int_equal(o_fast, 1);
    o_fast = 0;
    cfg.trace = 0;
    char *bare2[] = {"app", "--fast", "--trace", "--port", "7", NULL};
    argc = 5;
    assert_int_equal(canal_config_from_args(&cfg, &argc, bare2, &err), 0);
    assert_int_equal(o_fast, 1);
    assert_int_equal(cfg.trace, 1);
    assert_int_equal(cfg.port, 7);
    /* and the environment, its name derived as canal's are */
    setenv("CANAL_ITEM_COUNT", "7", 1);
    setenv("CANAL_DATA_DIR", "off", 1);
    assert_int_equal(canal_config_from_env(&cfg, &err), 0);
    unsetenv("CANAL_ITEM_COUNT");
    unsetenv("CANAL_DATA_DIR");
    assert_int_equal(o_count, 7);
    assert_null(o_dir);
}

static void app_option_declarations(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    canal_error_info_t err;
    size_t n;
    const canal_option_t bad[][1] = {
        {{"port", CANAL_OPTION_NUMBER, &n, NULL, .help = "canal's"}},
        {{"Big", CANAL_OPTION_NUMBER, &n, NULL, .help = "capitals"}},
        {{"help", CANAL_OPTION_SWITCH, &n, NULL, .help = "--help"}},
        {{"n", CANAL_OPTION_NUMBER, NULL, NULL, .help = "no variable"}},
        {{"n", CANAL_OPTION_NUMBER, &n, NULL, .help = NULL}},
        {{"n", CANAL_OPTION_NUMBER, &n, "x", .help = "bad default"}},
        {{"n", CANAL_OPTION_NUMBER, &n, "0", .min = 1, .help = "default under min"}},
        {{"n", CANAL_OPTION_SWITCH, &n, "yes", .help = "bad default"}},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(canal_config_options(&cfg, bad[i], 1, &err), CANAL_EINVAL);
        assert_null(cfg.options);
    }
    const canal_option_t twice[] = {{"n", CANAL_OPTION_NUMBER, &n, NULL, .help = "a"},
                                    {"n", CANAL_OPTION_NUMBER, &n, NULL, .help = "b"}};
    assert_int_equal(canal_config_options(&cfg, twice, 2, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "declared twice"));
}

static void app_option_help(void **state)
{
    canal_config_t cfg;
    app_config(&cfg);
    char *text = NULL, *md = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(canal_config_help(&cfg, 0, f), 0);
    fclose(f);
    f = open_memstream(&md, &len);
    assert_int_equal(canal_config_help(&cfg, 1, f), 0);
    fclose(f);
    assert_non_null(strstr(text, "--port N"));
    assert_non_null(strstr(text, "--data-dir DIR"));
    assert_non_null(strstr(text, "CANAL_ITEM_COUNT; default 10 (1 to 100)"));
    assert_non_null(strstr(md, "| `--fast on\\|off` | `CANAL_FAST` | off | off or on | skip the checks |"));
    assert_non_null(strstr(md, "| `--data-dir DIR` | `CANAL_DATA_DIR` | data |"));
    free(text);
    free(md);
}

/* The configuration file */

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void file_errors(void **state)
{
    struct {
        const char *text, *message;
    } cases[] = {
        {"{\"prot\": 80}", "unknown key 'prot'"},
        {"{\"port\": \"80\"}", "port: wrong type (a whole number expected)"},
        {"{\"env\": 1}", "env: wrong type (a string expected)"},
        {"{\"port\": 99999}", "port: bad value '99999' (0 to 65535)"},
        {"{\"max-body\": -1}", "max-body: bad value '-1'"},
        {"{\"env\": \"staging\"}", "env: bad value 'staging'"},
        {"{\"config\": \"other.json\"}", "unknown key 'config'"},
        {"{\"item-count\": 0}", "item-count: bad value '0' (1 to 100)"},
        {"[1]", "not a JSON object"},
        {"{\"port\": 1, \"port\": 2}", "duplicate"},
        {"{\"port\": ", "line 1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        canal_config_t cfg;
        app_config(&cfg);
        const char *path = write_file("bad.json", cases[i].text);
        canal_error_info_t err;
        assert_int_equal(canal_config_from_file(&cfg, path, &err), CANAL_EINVAL);
        if (strncmp(err.message, path, strlen(path)) != 0 || strstr(err.message, cases[i].message) == NULL)
            fail_msg("%s: '%s' lacks the file or '%s'", cases[i].text, err.message, cases[i].message);
    }
    canal_config_t cfg;
    canal_config_init(&cfg);
    canal_error_info_t err;
    char missing[128];
    snprintf(missing, sizeof(missing), "%s/none.json", dir);
    assert_int_equal(canal_config_from_file(&cfg, missing, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "none.json"));
}

/* defaults < file < environment < flags, for canal's settings and the app's */
static void precedence(void **state)
{
    const char *path = write_file("app.json", "{\"port\": 1001, \"threads\": 3, \"max-body\": 5000,"
                                              " \"log-format\": \"json\", \"log-level\": \"warn\", \"unix-mode\": \"0600\","
                                              " \"item-count\": 20, \"data-dir\": \"/file\", \"fast\": \"on\"}");
    char path_copy[128];
    snprintf(path_copy, sizeof(path_copy), "%s", path);
    canal_config_t cfg;
    o_fast = 0;
    app_config(&cfg);
    setenv("CANAL_CONFIG", path_copy, 1);
    setenv("CANAL_THREADS", "4", 1);
    setenv("CANAL_ITEM_COUNT", "30", 1);
    setenv("CANAL_PORT", "1002", 1);
    char *argv[] = {"app", "--port", "1003", "--item-count", "40", "rest", NULL};
    int argc = 6;
    canal_error_info_t err;
    int rc = canal_config_load(&cfg, &argc, argv, &err);
    unsetenv("CANAL_THREADS");
    unsetenv("CANAL_ITEM_COUNT");
    unsetenv("CANAL_PORT");
    assert_int_equal(rc, 0);
    assert_int_equal(cfg.port, 1003);          /* flag over environment over file */
    assert_int_equal(cfg.threads, 4);          /* environment over file */
    assert_int_equal(cfg.max_body_size, 5000); /* file over default */
    assert_int_equal(cfg.log_format, CANAL_LOG_JSON);
    assert_int_equal(cfg.log_level, CANAL_LOG_WARN); /* a choice of three */
    assert_int_equal(cfg.unix_mode, 0600);
    assert_int_equal(cfg.max_header_count, 64); /* default */
    assert_int_equal(o_count, 40);
    assert_string_equal(o_dir, "/file");
    assert_int_equal(o_fast, 1);
    assert_string_equal(cfg.config_file, path_copy);
    assert_non_null(cfg.loaded);
    assert_int_equal(argc, 2);
    assert_string_equal(argv[1], "rest");
    /* --config on the command line wins over CANAL_CONFIG; a bad file stops the load */
    write_file("bad.json", "{\"port\": \"x\"}");
    char bad[128];
    snprintf(bad, sizeof(bad), "%s/bad.json", dir);
    char *argv2[] = {"app", "--config", bad, NULL};
    argc = 3;
    app_config(&cfg);
    assert_int_equal(canal_config_load(&cfg, &argc, argv2, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "bad.json: port: wrong type"));
    /* --help before anything is read */
    char *argv3[] = {"app", "--config", bad, "--help", NULL};
    argc = 4;
    assert_int_equal(canal_config_load(&cfg, &argc, argv3, &err), CANAL_EHELP);
    unsetenv("CANAL_CONFIG");
}

int main(int argc, char **argv)
{
    options = canal__config_options(&noptions);
    if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
        if (canal__config_markdown(table, sizeof(table)) != 0)
            return 1;
        fputs(table, stdout);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_rows),   cmocka_unit_test(defaults),      cmocka_unit_test(each_flag),
        cmocka_unit_test(each_env_var), cmocka_unit_test(unknown_flags), cmocka_unit_test(help),
        cmocka_unit_test(usage),        cmocka_unit_test(docs_table),
        cmocka_unit_test(app_option_defaults_and_flags), cmocka_unit_test(app_option_declarations),
        cmocka_unit_test(app_option_help), cmocka_unit_test(file_errors), cmocka_unit_test(precedence),
    };
    snprintf(dir, sizeof(dir), "/tmp/canal-config-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
