/* SPDX-License-Identifier: MIT */
/*
 * canal-routes: the router without HTTP, for debugging route tables and for conformance tests.
 *
 *   canal-routes [OPTION]... ROUTES_FILE < REQUESTS
 *
 * ROUTES_FILE holds one "METHOD SP TEMPLATE" a line. Each input line "METHOD SP TARGET" gets
 * exactly one output line "STATUS TAB TEMPLATE TAB PARAMS" (see docs/routing.md); with --link,
 * each input line "ROUTE SP NAME=VALUE&..." gets "STATUS TAB URL"; with --ecma, it prints the
 * ECMA-262 form of every regex constraint (what OpenAPI documents say) and exits. The options (in any order,
 * before or after the file) set the router's options; by default the trailing-slash policy is
 * strict, literals are case-sensitive, HEAD requests are answered by GET routes, and nothing
 * answers OPTIONS by itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/router.h"

/* The options, one table for parsing and for the usage. */
enum { OPT_CASE, OPT_SLASH, OPT_NO_HEAD, OPT_AUTO_OPTIONS, OPT_LINK, OPT_ECMA, OPT_HELP };
static const struct option {
    const char *name, *alias;
    int what, value;
    const char *help;
} options[] = {
    {"--case-insensitive", NULL, OPT_CASE, 0, "literals compare ASCII case-insensitively"},
    {"--case-sensitive", NULL, OPT_CASE, 1, "literals compare exactly (the default)"},
    {"--trailing-slash=strict", NULL, OPT_SLASH, CANAL_SLASH_STRICT, "\"/a/\" is not \"/a\" (the default)"},
    {"--trailing-slash=ignore", NULL, OPT_SLASH, CANAL_SLASH_IGNORE, "\"/a/\" matches as \"/a\""},
    {"--trailing-slash=redirect", NULL, OPT_SLASH, CANAL_SLASH_REDIRECT, "\"/a/\" answers 308 to \"/a\""},
    {"--no-head", NULL, OPT_NO_HEAD, 1, "HEAD is not answered by GET routes"},
    {"--auto-options", NULL, OPT_AUTO_OPTIONS, 0, "OPTIONS without a route answers 204 with allow="},
    {"--link", NULL, OPT_LINK, 1, "link generation: each line \"ROUTE NAME=VALUE&...\", ROUTE the\n"
                                  "                             route's line in ROUTES_FILE; prints \"STATUS<TAB>URL\""},
    {"--ecma", NULL, OPT_ECMA, 1, "print each regex constraint as \"TEMPLATE<TAB>PARAM<TAB>ECMA\",\n"
                                  "                             its ECMA-262 form (OpenAPI's pattern), and exit"},
    {"--help", "-h", OPT_HELP, 1, "print this help and exit"},
};

static void usage(FILE *to)
{
    fputs("usage: canal-routes [OPTION]... ROUTES_FILE < REQUESTS\n"
          "Matches each request line \"METHOD TARGET\" against the routes of ROUTES_FILE (one\n"
          "\"METHOD TEMPLATE\" a line) and prints \"STATUS<TAB>TEMPLATE<TAB>PARAMS\". Options may\n"
          "come in any order, before or after the file; the later of two opposite ones wins.\n\n",
          to);
    for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
        fprintf(to, "  %-27s%s\n", options[i].name, options[i].help);
    fputs("  -h                         the same as --help\n", to);
}

/* Percent-encodes '%', '&', '=' and every byte outside 0x21-0x7E. */
static void put_value(FILE *out, canal_str_t v)
{
    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)v.base[i];
        if (c < 0x21 || c > 0x7E || c == '%' || c == '&' || c == '=')
            fprintf(out, "%%%02X", c);
        else
            fputc(c, out);
    }
}

static size_t chomp(char *line, size_t n)
{
    if (n > 0 && line[n - 1] == '\n')
        n--;
    if (n > 0 && line[n - 1] == '\r')
        n--;
    line[n] = '\0';
    return n;
}

/* Decodes "k=v&k=v" (percent-escapes in both) into kv, in place; returns the count, or -1. */
static int parse_values(char *s, canal_kv_t *kv, int max)
{
    int n = 0;
    while (*s != '\0') {
        char *amp = strchr(s, '&'), *eq;
        if (amp != NULL)
            *amp = '\0';
        if (n == max || (eq = strchr(s, '=')) == NULL)
            return -1;
        *eq = '\0';
        int kl = canal_percent_decode((canal_str_t){s, strlen(s)}, s, 0);
        int vl = canal_percent_decode((canal_str_t){eq + 1, strlen(eq + 1)}, eq + 1, 0);
        if (kl < 0 || vl < 0)
            return -1;
        s[kl] = eq[1 + vl] = '\0';
        kv[n++] = (canal_kv_t){s, eq + 1};
        if (amp == NULL)
            break;
        s = amp + 1;
    }
    return n;
}

/* --link: "ROUTE SP VALUES" -> "200 TAB URL"; 404 for no such route, 400 for a bad line or
 * values the route cannot take. */
static void link_line(const canal_router_t *r, char *line, size_t n)
{
    char *sp = memchr(line, ' ', n), *end;
    canal_kv_t kv[64];
    unsigned long route = strtoul(line, &end, 10);
    int nkv = sp != NULL && end == sp && end != line ? parse_values(sp + 1, kv, 64) : -1;
    const canal_route_t *rt = route > 0 ? canal_router_route_at(r, route - 1) : NULL;
    if (nkv < 0) {
        printf("400\t-\n");
    } else if (rt == NULL) {
        printf("404\t-\n");
    } else {
        int len = canal_route_link(rt, kv, (size_t)nkv, NULL, 0);
        char *url = len >= 0 ? malloc((size_t)len + 1) : NULL;
        if (url != NULL && canal_route_link(rt, kv, (size_t)nkv, url, (size_t)len + 1) == len)
            printf("200\t%s\n", url);
        else
            printf("400\t-\n");
        free(url);
    }
}

static int load(canal_router_t *r, const char *file)
{
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        perror(file);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int rc = 0;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        chomp(line, (size_t)got);
        char *sp = strchr(line, ' ');
        if (sp == NULL || sp == line) {
            fprintf(stderr, "%s:%zu: expected \"METHOD TEMPLATE\"\n", file, lineno);
            rc = -1;
            break;
        }
        *sp = '\0';
        canal_error_info_t err;
        canal_route_spec_t spec = {.method = line, .tmpl = sp + 1};
        if (canal_router_add(r, &spec, NULL, &err) != 0) {
            fprintf(stderr, "%s:%zu: %s %s: at byte %zu: %s\n", file, lineno, line, sp + 1,
                    err.position, err.message);
            rc = -1;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* The options, in any order, and the one file. Returns 0, 1 for --help, or 2 (usage). */
static int parse_args(int argc, char **argv, canal_router_options_t *opts, int *link,
                      const char **file)
{
    int only_files = 0;
    *file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || a[1] == '\0') {
            if (*file != NULL)
                return 2;
            *file = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_files = 1;
            continue;
        }
        const struct option *o = NULL;
        for (size_t k = 0; k < sizeof(options) / sizeof(options[0]) && o == NULL; k++)
            if (strcmp(a, options[k].name) == 0 || (options[k].alias && strcmp(a, options[k].alias) == 0))
                o = &options[k];
        if (o == NULL) {
            fprintf(stderr, "canal-routes: unknown option '%s'\n", a);
            return 2;
        }
        switch (o->what) {
        case OPT_CASE: opts->case_sensitive = o->value; break;
        case OPT_SLASH: opts->trailing_slash = o->value; break;
        case OPT_NO_HEAD: opts->no_head_from_get = o->value; break;
        case OPT_AUTO_OPTIONS: opts->no_auto_options = o->value; break;
        case OPT_LINK: *link = o->value; break;
        case OPT_ECMA: *link = 2; break;
        default: return 1;
        }
    }
    return *file == NULL ? 2 : 0;
}

int main(int argc, char **argv)
{
    canal_router_options_t opts = {.case_sensitive = 1,
                                   .trailing_slash = CANAL_SLASH_STRICT,
                                   .no_auto_options = 1};
    int link = 0;
    const char *file;
    int rc = parse_args(argc, argv, &opts, &link, &file);
    if (rc != 0) {
        usage(rc == 1 ? stdout : stderr);
        return rc == 1 ? 0 : 2;
    }
    canal_router_t *r = canal_router_create(&opts);
    if (r == NULL || load(r, file) != 0) {
        canal_router_destroy(r);
        return 1;
    }

    if (link == 2) { /* --ecma */
        for (size_t i = 0; i < canal_router_route_count(r); i++) {
            const canal_route_t *rt = canal_router_route_at(r, i);
            canal_route_param_info_t p;
            canal_constraint_info_t c;
            for (size_t k = 0; canal_route_param_info(rt, k, &p) == 0; k++)
                for (size_t j = 0; canal_route_param_constraint(rt, k, j, &c) == 0; j++)
                    if (c.kind == CANAL_CONSTRAINT_REGEX)
                        printf("%s\t%s\t%s\n", canal_route_template(rt), p.name, c.ecma);
        }
        canal_router_destroy(r);
        return 0;
    }

    char *line = NULL, *scratch = NULL;
    size_t cap = 0, scratch_cap = 0;
    ssize_t got;
    canal_match_t m;
    while ((got = getline(&line, &cap, stdin)) >= 0) {
        size_t n = chomp(line, (size_t)got);
        if (link) {
            link_line(r, line, n);
            continue;
        }
        char *sp = memchr(line, ' ', n);
        int status = 400;
        canal_str_t method = {line, sp ? (size_t)(sp - line) : n};
        canal_str_t target = {sp ? sp + 1 : line + n, sp ? n - (size_t)(sp - line) - 1 : 0};
        if (scratch_cap < target.len + 1) {
            free(scratch);
            scratch_cap = target.len + 1;
            if ((scratch = malloc(scratch_cap)) == NULL) {
                perror("canal-routes");
                return 1;
            }
        }
        if (sp != NULL)
            status = canal_router_match(r, method, target, scratch, scratch_cap, &m);
        if (status == 200) {
            printf("200\t%s\t", canal_route_template(m.route));
            for (size_t k = 0; k < m.nparams; k++) {
                if (k)
                    putchar('&');
                fwrite(m.params[k].name.base, 1, m.params[k].name.len, stdout);
                putchar('=');
                put_value(stdout, m.params[k].value);
            }
            putchar('\n');
        } else if (status == 405 || status == 204) {
            printf("%d\t-\tallow=", status);
            for (size_t k = 0, first = 1; k < canal_router_method_count(r); k++) {
                if (m.allow >> k & 1) {
                    printf("%s%s", first ? "" : ",", canal_router_method_name(r, k));
                    first = 0;
                }
            }
            putchar('\n');
        } else if (status == 308) {
            printf("308\t-\tlocation=");
            put_value(stdout, m.location);
            putchar('\n');
        } else {
            printf("%d\t-\t\n", status == 404 ? 404 : 400);
        }
    }
    free(line);
    free(scratch);
    canal_router_destroy(r);
    return 0;
}
