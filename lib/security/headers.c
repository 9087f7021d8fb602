/* SPDX-License-Identifier: MIT */
/*
 * The security headers preset (canal/headers.h). A preset is compiled once, when it is
 * given, into the h2o header entries it adds (names and values in the app's memory), and the
 * commit (res.c, put_head()) appends them to every answer: the matched endpoint's preset, or
 * the app's for an answer without a route. libh2o's own error answers that pass through
 * canal's path (a 413 for a body over the limit, a 400 for broken chunked framing) get the
 * app's preset from the filter that rewrites them into problem details (h2o_compat.c). Strict-Transport-Security is kept apart and added
 * only on connections accepted by a TLS listener (struct canal_conn.tls), never by what the
 * client claims (an HTTP/2 ":scheme https" over cleartext is not TLS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "canal/headers.h"

static h2o_iovec_t name_nosniff = {"x-content-type-options", 22};
static h2o_iovec_t name_referrer = {"referrer-policy", 15};
static h2o_iovec_t name_frame = {"x-frame-options", 15};
static h2o_iovec_t name_csp = {"content-security-policy", 23};

static int value_ok(const char *s)
{
    return strpbrk(s, "\r\n") == NULL;
}

static void put(struct canal__sechdr *c, h2o_iovec_t *name, const char *value)
{
    char *v = strdup(value);
    c->owned[c->n] = v;
    c->plain[c->n++] = (h2o_header_t){name, NULL, h2o_iovec_init(v ? v : "", v ? strlen(v) : 0)};
}

/* Compiles p into the app's list of presets: NULL with CANAL_EINVAL or CANAL_ENOMEM in *rc */
struct canal__sechdr *canal__sechdr_make(canal_app_t *app, const canal_security_headers_t *p, int *rc)
{
    if ((p->referrer_policy && !value_ok(p->referrer_policy)) || (p->frame_options && !value_ok(p->frame_options)) ||
        (p->csp && !value_ok(p->csp))) {
        *rc = CANAL_EINVAL;
        return NULL;
    }
    struct canal__sechdr *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        *rc = CANAL_ENOMEM;
        return NULL;
    }
    if (!p->no_nosniff)
        put(c, &name_nosniff, "nosniff");
    const char *ref = p->referrer_policy ? p->referrer_policy : "strict-origin-when-cross-origin";
    if (*ref)
        put(c, &name_referrer, ref);
    const char *frame = p->frame_options ? p->frame_options : "DENY";
    if (*frame)
        put(c, &name_frame, frame);
    if (p->csp && *p->csp)
        put(c, &name_csp, p->csp);
    if (!p->no_hsts) {
        char v[64];
        snprintf(v, sizeof(v), "max-age=%u%s", p->hsts_max_age ? p->hsts_max_age : 31536000u,
                 p->hsts_include_subdomains ? "; includeSubDomains" : "");
        c->hsts = strdup(v);
    }
    int failed = !p->no_hsts && c->hsts == NULL;
    for (size_t i = 0; i < c->n; i++)
        failed |= c->owned[i] == NULL;
    c->next = app->sechdrs;
    app->sechdrs = c; /* freed with the app, even when incomplete */
    if (failed) {
        *rc = CANAL_ENOMEM;
        return NULL;
    }
    *rc = 0;
    return c;
}

void canal__sechdrs_free(canal_app_t *app)
{
    for (struct canal__sechdr *c = app->sechdrs, *next; c != NULL; c = next) {
        next = c->next;
        for (size_t i = 0; i < c->n; i++)
            free(c->owned[i]);
        free(c->hsts);
        free(c);
    }
    app->sechdrs = NULL;
}

void canal__sechdr_put(h2o_req_t *h, const struct canal_conn *conn, const struct canal__sechdr *c)
{
    int tls = c->hsts != NULL && conn != NULL && conn->tls;
    h2o_vector_reserve(&h->pool, &h->res.headers, h->res.headers.size + c->n + tls);
    memcpy(h->res.headers.entries + h->res.headers.size, c->plain, c->n * sizeof(h2o_header_t));
    h->res.headers.size += c->n;
    if (tls)
        h2o_add_header(&h->pool, &h->res.headers, H2O_TOKEN_STRICT_TRANSPORT_SECURITY, NULL, c->hsts,
                       strlen(c->hsts));
}
