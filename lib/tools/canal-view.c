/* SPDX-License-Identifier: MIT */
/*
 * canal-view: renders a Mustache template with JSON data, for tests and for checking a
 * template by hand (canal/view.h; docs/views.md).
 *
 *   canal-view [--partials DIR] [--layout NAME] TEMPLATE_FILE [DATA_FILE]
 *
 * DATA_FILE is a JSON text ("-" or none: standard input). The partials are the templates of
 * DIR (*.mustache, named by their path under DIR without the ending); the layout is one of
 * them. The page goes to standard output. Exit status: 0, 1 when the template does not compile
 * or does not render (the message, with file, line and column, on standard error), 2 for bad
 * usage or unreadable data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/view.h"

static void usage(FILE *to)
{
    fputs("usage: canal-view [--partials DIR] [--layout NAME] TEMPLATE_FILE [DATA_FILE]\n"
          "Renders TEMPLATE_FILE (Mustache) with the JSON of DATA_FILE (default: standard input)\n"
          "to standard output.\n\n"
          "  --partials DIR   the templates of DIR (*.mustache) are the partials, by their path\n"
          "                   under DIR without the ending\n"
          "  --layout NAME    renders the page inside the partial NAME, at its {{>body}}\n"
          "  -h, --help       print this help and exit\n",
          to);
}

/* The whole file (NUL-terminated), or NULL */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            char *b = realloc(buf, cap *= 2);
            if (b == NULL)
                free(buf);
            buf = b;
        }
    }
    if (buf != NULL && ferror(f))
        free(buf), buf = NULL;
    fclose(f);
    if (buf != NULL)
        buf[n] = '\0', *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    const char *partials = NULL, *layout = NULL, *files[2] = {NULL, NULL};
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--partials") == 0 && i + 1 < argc) {
            partials = argv[++i];
        } else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc) {
            layout = argv[++i];
        } else if ((argv[i][0] != '-' || strcmp(argv[i], "-") == 0) && nfiles < 2) {
            files[nfiles++] = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (nfiles == 0) {
        usage(stderr);
        return 2;
    }
    json_error_t je;
    json_t *data = files[1] && strcmp(files[1], "-") != 0 ? json_load_file(files[1], JSON_DECODE_ANY, &je)
                                                           : json_loadf(stdin, JSON_DECODE_ANY, &je);
    if (data == NULL) {
        fprintf(stderr, "canal-view: %s:%d:%d: %s\n", files[1] ? files[1] : "<stdin>", je.line, je.column, je.text);
        return 2;
    }
    size_t len = 0;
    char *text = slurp(files[0], &len);
    if (text == NULL) {
        fprintf(stderr, "canal-view: %s: cannot be read\n", files[0]);
        json_decref(data);
        return 2;
    }
    canal_views_t *views = canal_views_create();
    canal_error_info_t err = {0};
    canal_view_data_t d = CANAL_VIEW_JSON(data);
    char *out = NULL;
    size_t outlen = 0;
    /* the partials first: the page's own name wins over a partial of the same name */
    int rc = views == NULL ? CANAL_ENOMEM : 0;
    if (rc == 0 && partials != NULL)
        rc = canal_views_load(views, partials, &err);
    if (rc == 0)
        rc = canal_views_add(views, files[0], text, len, &err);
    if (rc == 0)
        rc = canal_views_render(views, files[0], layout, &d, &out, &outlen, &err);
    if (rc == 0 && fwrite(out, 1, outlen, stdout) != outlen)
        rc = canal_error_set(&err, CANAL_ESYS, 0, "standard output: write failed");
    if (rc != 0)
        fprintf(stderr, "canal-view: %s\n", err.message[0] ? err.message : canal_strerror(rc));
    free(out);
    free(text);
    canal_views_destroy(views);
    json_decref(data);
    return rc == 0 ? 0 : 1;
}
