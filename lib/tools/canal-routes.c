/* SPDX-License-Identifier: MIT */
/*
 * canal-routes: the router without HTTP, for debugging route tables and for conformance tests.
 *
 *   canal-routes [--case-insensitive] ROUTES_FILE  < requests
 *
 * ROUTES_FILE holds one "METHOD SP TEMPLATE" a line. Each input line "METHOD SP TARGET" gets
 * exactly one output line "STATUS TAB TEMPLATE TAB PARAMS" (see docs/routing.md). The router
 * runs with the trailing-slash policy strict and, unless told otherwise, case-sensitive
 * literals; HEAD requests are answered by GET routes, and nothing answers OPTIONS by itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/router.h"

static void usage(void)
{
    fprintf(stderr, "usage: canal-routes [--case-insensitive] ROUTES_FILE < REQUESTS\n");
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

int main(int argc, char **argv)
{
    canal_router_options_t opts = {.case_sensitive = 1,
                                   .trailing_slash = CANAL_SLASH_STRICT,
                                   .no_auto_options = 1};
    int i = 1;
    if (i < argc && strcmp(argv[i], "--case-insensitive") == 0) {
        opts.case_sensitive = 0;
        i++;
    }
    if (i + 1 != argc) {
        usage();
        return 2;
    }
    canal_router_t *r = canal_router_create(&opts);
    if (r == NULL || load(r, argv[i]) != 0) {
        canal_router_destroy(r);
        return 1;
    }

    char *line = NULL, *scratch = NULL;
    size_t cap = 0, scratch_cap = 0;
    ssize_t got;
    canal_match_t m;
    while ((got = getline(&line, &cap, stdin)) >= 0) {
        size_t n = chomp(line, (size_t)got);
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
        } else if (status == 405) {
            printf("405\t-\tallow=");
            for (size_t k = 0, first = 1; k < canal_router_method_count(r); k++) {
                if (m.allow >> k & 1) {
                    printf("%s%s", first ? "" : ",", canal_router_method_name(r, k));
                    first = 0;
                }
            }
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
