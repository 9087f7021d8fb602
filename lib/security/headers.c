/* SPDX-License-Identifier: MIT */
/*
 * The security headers preset (canal/headers.h), a feature (core/feature.h). A preset is
 * compiled once, when it is given, into the h2o header entries it adds (names and values in
 * the app's memory); at start each route gets the nearest preset (its own, its groups', the
 * app's) as a head, which the commit runs, and the app's preset is the head of the answers
 * without a route, libh2o's own error answers included (a 413 for a body over the limit, a
 * 400 for broken chunked framing, rewritten into problem details by h2o_compat.c). Strict-Transport-Security is kept apart and added
 * only on connections accepted by a TLS listener (struct canal_conn.tls), never by what the
 * client claims (an HTTP/2 ":scheme https" over cleartext is not TLS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "security/security.h"
#include "canal/headers.h"
#include "security/security.h"

/* A compiled security headers preset */
struct canal__sechdr {
    struct canal__sechdr *next;  /* the app's list */
    h2o_header_t plain[4];       /* on every answer */
    char *owned[4];
    size_t n;
    char *hsts;                  /* Strict-Transport-Security's value (TLS only), or NULL */
};


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

/* The feature's state: every preset compiled, freed with the app */
struct presets {
    struct canal__sechdr *head;
};
static const struct canal__feature feature;

/* Compiles p into the app's list of presets: NULL with CANAL_EINVAL or CANAL_ENOMEM in *rc */
static struct canal__sechdr *sechdr_make(canal_app_t *app, const canal_security_headers_t *p, int *rc)
{
    struct presets *all = canal__feature_on(app, &feature);
    if (all == NULL) {
        *rc = atomic_load(&app->state) != APP_CREATED ? CANAL_ESTATE : CANAL_ENOMEM;
        return NULL;
    }
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
    c->next = all->head;
    all->head = c; /* freed with the app, even when incomplete */
    if (failed) {
        *rc = CANAL_ENOMEM;
        return NULL;
    }
    *rc = 0;
    return c;
}

/* CANAL_SECURITY_HEADERS(): a route's own preset, compiled; the kind's address is also the
 * key of canal_app_security_headers()'s scoped setting */
static int option_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    int rc = 0;
    if (value == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "CANAL_SECURITY_HEADERS(NULL): a preset is needed");
    if ((*kept = sechdr_make(app, value, &rc)) == NULL)
        return canal_error_set(err, rc, 0, rc == CANAL_EINVAL ? "a security header value has CR or LF" : NULL);
    return 0;
}
const canal_option_kind_t canal_security_headers_option = {&feature, "security headers", option_attach, NULL};

int canal_app_security_headers(canal_app_t *app, canal_route_group_t *group, const canal_security_headers_t *preset)
{
    const struct canal__sechdr *sh = NULL;
    int rc = atomic_load(&app->state) != APP_CREATED ? CANAL_ESTATE : 0;
    if (rc == 0 && preset != NULL)
        sh = sechdr_make(app, preset, &rc);
    if (rc == 0)
        rc = canal__scope_set(app, &canal_security_headers_option, group, sh);
    return rc == 0 ? 0
                   : canal__reg_fail(app, NULL, rc, "security headers: %s",
                                     rc == CANAL_ESTATE   ? "set before the app starts"
                                     : rc == CANAL_EINVAL ? "a value has CR or LF, or not a route group of this app"
                                                          : "out of memory");
}

/* The head: the preset's fields, and HSTS on a connection accepted by a TLS listener */
static void sechdr_head(canal_req_t *req, h2o_req_t *h, const void *arg)
{
    const struct canal__sechdr *c = arg;
    const struct canal_conn *conn = req != NULL ? req->conn : canal__conn_of(h);
    int tls = c->hsts != NULL && conn != NULL && conn->tls;
    h2o_vector_reserve(&h->pool, &h->res.headers, h->res.headers.size + c->n + tls);
    memcpy(h->res.headers.entries + h->res.headers.size, c->plain, c->n * sizeof(h2o_header_t));
    h->res.headers.size += c->n;
    if (tls)
        h2o_add_header(&h->pool, &h->res.headers, H2O_TOKEN_STRICT_TRANSPORT_SECURITY, NULL, c->hsts,
                       strlen(c->hsts));
}

/* ---- the feature ---- */

static int presets_start(canal_app_t *app, void *st)
{
    for (size_t i = 0; i < app->nendpoints; i++) {
        struct canal_endpoint *ep = &app->endpoints[i];
        const void *sh = canal__scope_get(app, &canal_security_headers_option, ep, canal__endpoint_option(ep, &canal_security_headers_option));
        if (sh != NULL && canal__endpoint_head(ep, sechdr_head, sh) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many heads", i);
            return -1;
        }
    }
    const void *sh = canal__scope_get(app, &canal_security_headers_option, NULL, NULL);
    return sh != NULL ? canal__app_head(app, sechdr_head, sh) : 0;
}

static void presets_dispose(canal_app_t *app, void *st)
{
    struct presets *all = st;
    for (struct canal__sechdr *c = all->head, *next; c != NULL; c = next) {
        next = c->next;
        for (size_t i = 0; i < c->n; i++)
            free(c->owned[i]);
        free(c->hsts);
        free(c);
    }
}

static const struct canal__feature feature = {
    .name = "security headers",
    .size = sizeof(struct presets),
    .start = presets_start,
    .dispose = presets_dispose,
};
