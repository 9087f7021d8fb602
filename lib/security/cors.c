/* SPDX-License-Identifier: MIT */
/*
 * CORS policies are copied into the app, then attached to the endpoints of the routes they
 * cover when the app starts, so that per request a route without a policy pays one test of a
 * pointer. A preflight is recognised before routing (OPTIONS with Origin and
 * Access-Control-Request-Method) and looked up as the request it announces: the policy of
 * the route that would serve that method on that path answers it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "security/security.h"
#include "canal/cors.h"

/* A CORS policy's values, copied; immutable once made */
struct cors_values {
    struct cors_values *older; /* the ones a reload replaced: freed with the app */
    char *origins, *methods, *headers, *expose; /* owned, as given ("" for none) */
    int any_origin, any_header, credentials;
    char max_age[24];
};

/* A policy as the routes hold it: its values, which canal_app_cors_reload() replaces (a
 * request reads them once) */
struct canal__cors {
    const canal_cors_t *source; /* what it was copied from (to share copies of one policy) */
    _Atomic(struct cors_values *) v;
};

static const struct cors_values *values(const struct canal__cors *c)
{
    return atomic_load_explicit(&((struct canal__cors *)c)->v, memory_order_acquire);
}


/* Copies a list, trimming the spaces around its items; NULL gives "". */
static char *copy_list(const char *s)
{
    char *out = malloc(s ? strlen(s) + 1 : 1), *o = out;
    if (out == NULL || s == NULL) {
        if (out)
            *out = '\0';
        return out;
    }
    while (*s) {
        while (*s == ' ' || *s == ',')
            s++;
        size_t n = strcspn(s, ",");
        while (n > 0 && s[n - 1] == ' ')
            n--;
        if (n > 0) {
            if (o != out)
                *o++ = ',';
            memcpy(o, s, n);
            o += n;
        }
        s += n;
        while (*s == ' ')
            s++;
    }
    *o = '\0';
    return out;
}

/* 1 if item (n bytes) is in the comma-separated list */
static int in_list(const char *list, const char *item, size_t n, int nocase)
{
    while (*list) {
        size_t k = strcspn(list, ",");
        if (k == n && (nocase ? strncasecmp(list, item, n) : strncmp(list, item, n)) == 0)
            return 1;
        list += k + (list[k] == ',');
    }
    return 0;
}

static void values_free(struct cors_values *v)
{
    while (v != NULL) {
        struct cors_values *older = v->older;
        free(v->origins);
        free(v->methods);
        free(v->headers);
        free(v->expose);
        free(v);
        v = older;
    }
}

static void cors_free(struct canal__cors *c)
{
    if (c == NULL)
        return;
    values_free(atomic_load(&c->v));
    free(c);
}

static int same_list(const char *copy, const char *given)
{
    char *c = copy_list(given);
    int same = c != NULL && strcmp(c, copy) == 0;
    free(c);
    return same;
}

static int same_policy(const struct cors_values *c, const canal_cors_t *p)
{
    return same_list(c->origins, p->origins) && same_list(c->methods, p->methods) &&
           same_list(c->headers, p->headers) && same_list(c->expose, p->expose) &&
           c->credentials == (p->credentials != 0) && atoi(c->max_age) == (p->max_age > 0 ? p->max_age : 0);
}

struct cors_rule {
    char *prefix;               /* without leading and trailing '/'; "" for all */
    const canal_route_t *route; /* or one route */
    struct canal__cors *policy;
};

/* The feature's state: the policies (every copy, freed with the app), the rules, and each
 * route's policy, settled at start (at the route's number) */
struct cors_state {
    struct canal__cors **policies;
    size_t npolicies;
    struct cors_rule *rules;
    size_t nrules;
    const struct canal__cors **by_route;
};
static const struct canal__feature feature;
#define GUARD_ORDER 20 /* after the rate limit, before the policy (core/feature.h) */

/* p's values, copied; NULL when out of memory */
static struct cors_values *values_copy(const canal_cors_t *p)
{
    struct cors_values *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->origins = copy_list(p->origins);
    c->methods = copy_list(p->methods);
    c->headers = copy_list(p->headers);
    c->expose = copy_list(p->expose);
    if (!c->origins || !c->methods || !c->headers || !c->expose) {
        values_free(c);
        return NULL;
    }
    c->any_origin = strcmp(c->origins, "*") == 0;
    c->any_header = strcmp(c->headers, "*") == 0 && !p->credentials;
    c->credentials = p->credentials != 0;
    if (p->max_age > 0)
        snprintf(c->max_age, sizeof(c->max_age), "%d", p->max_age);
    return c;
}

static struct canal__cors *cors_copy(canal_app_t *app, const canal_cors_t *p)
{
    struct cors_state *ops = canal__feature_on(app, &feature);
    if (ops == NULL)
        return NULL;
    /* the controller filter attaches one policy to many routes, again at each rebuild of its
     * chains: share a copy when nothing changed since */
    for (size_t i = 0; i < ops->npolicies; i++)
        if (ops->policies[i]->source == p && same_policy(values(ops->policies[i]), p))
            return ops->policies[i];
    struct canal__cors **grown = realloc(ops->policies, (ops->npolicies + 1) * sizeof(*grown));
    if (grown == NULL)
        return NULL;
    ops->policies = grown;
    struct canal__cors *c = calloc(1, sizeof(*c));
    struct cors_values *v = c != NULL ? values_copy(p) : NULL;
    if (v == NULL) {
        free(c);
        return NULL;
    }
    c->source = p;
    atomic_init(&c->v, v);
    ops->policies[ops->npolicies++] = c;
    return c;
}

static int add_rule(canal_app_t *app, const char *prefix, const canal_route_t *route, const canal_cors_t *policy)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return CANAL_ESTATE;
    if (policy == NULL || policy->origins == NULL || policy->origins[strspn(policy->origins, " ,")] == '\0')
        return CANAL_EINVAL;
    struct canal__cors *c = cors_copy(app, policy);
    if (c == NULL)
        return CANAL_ENOMEM;
    struct cors_state *ops = canal__feature_state(app, &feature);
    struct cors_rule *grown = realloc(ops->rules, (ops->nrules + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    ops->rules = grown;
    struct cors_rule *r = &ops->rules[ops->nrules];
    r->prefix = NULL;
    if (prefix != NULL) {
        while (*prefix == '/')
            prefix++;
        size_t n = strlen(prefix);
        while (n > 0 && prefix[n - 1] == '/')
            n--;
        if ((r->prefix = strndup(prefix, n)) == NULL)
            return CANAL_ENOMEM;
    }
    r->route = route;
    r->policy = c;
    ops->nrules++;
    return 0;
}

/* add_rule()'s failure kept as the app's registration error */
static int cors_result(canal_app_t *app, int rc)
{
    if (rc == 0)
        return 0;
    return canal__reg_fail(app, NULL, rc, "CORS: %s",
                           rc == CANAL_ESTATE  ? "policies are set before the app starts"
                           : rc == CANAL_EINVAL ? "a policy needs origins (and a route, if by route)"
                                                : "out of memory");
}

int canal_app_cors(canal_app_t *app, const char *prefix, const canal_cors_t *policy)
{
    return cors_result(app, add_rule(app, prefix ? prefix : "", NULL, policy));
}

int canal_app_cors_route(canal_app_t *app, const canal_route_t *route, const canal_cors_t *policy)
{
    return cors_result(app, route == NULL ? CANAL_EINVAL : add_rule(app, NULL, route, policy));
}

int canal_app_cors_reload(canal_app_t *app, const canal_cors_t *policy)
{
    struct cors_state *ops = canal__feature_state(app, &feature);
    if (policy == NULL || policy->origins == NULL || policy->origins[strspn(policy->origins, " ,")] == '\0')
        return CANAL_EINVAL;
    size_t found = 0;
    for (size_t i = 0; ops != NULL && i < ops->npolicies; i++) {
        struct canal__cors *c = ops->policies[i];
        if (c->source != policy)
            continue;
        struct cors_values *v = values_copy(policy);
        if (v == NULL)
            return CANAL_ENOMEM;
        /* the ones before stay reachable from the new: a request may be reading them */
        struct cors_values *old = atomic_load(&c->v);
        do
            v->older = old;
        while (!atomic_compare_exchange_weak(&c->v, &old, v));
        found++;
    }
    return found > 0 ? 0 : CANAL_ENOTFOUND;
}

/* 1 if the template starts with the prefix, on a segment boundary */
static int covers(const char *prefix, const char *tmpl)
{
    size_t n = strlen(prefix);
    while (*tmpl == '/')
        tmpl++;
    return n == 0 || (strncasecmp(tmpl, prefix, n) == 0 && (tmpl[n] == '\0' || tmpl[n] == '/'));
}

static h2o_iovec_t find_header(const h2o_req_t *h, const h2o_token_t *token, const char *name, size_t n)
{
    ssize_t i = token ? h2o_find_header(&h->headers, token, -1) : h2o_find_header_by_str(&h->headers, name, n, -1);
    return i >= 0 ? h->headers.entries[i].value : h2o_iovec_init(NULL, 0);
}

static void add(canal_req_t *req, const char *name, size_t nlen, const char *value, size_t vlen)
{
    h2o_req_t *h = req->h2o;
    h2o_add_header_by_str(&h->pool, &h->res.headers, name, nlen, 0, NULL, value, vlen);
}

static int origin_allowed(const struct cors_values *c, h2o_iovec_t origin)
{
    return c->any_origin || in_list(c->origins, origin.base, origin.len, 0);
}

/* The headers of a response to an allowed origin (the actual request and the preflight). */
static void allow_origin(canal_req_t *req, const struct cors_values *c, h2o_iovec_t origin)
{
    if (c->any_origin && !c->credentials)
        add(req, H2O_STRLIT("access-control-allow-origin"), H2O_STRLIT("*"));
    else
        add(req, H2O_STRLIT("access-control-allow-origin"), origin.base, origin.len);
    if (c->credentials)
        add(req, H2O_STRLIT("access-control-allow-credentials"), H2O_STRLIT("true"));
}

static void vary_origin(canal_req_t *req, const struct cors_values *c)
{
    if (!c->any_origin || c->credentials)
        add(req, H2O_STRLIT("vary"), H2O_STRLIT("Origin"));
}

static int preflight(canal_req_t *req, const void *arg);

/* The guard of a route with a policy: 1 if it answered (a preflight to the route's own OPTIONS
 * handler) */
static int cors_guard(canal_req_t *req, const void *arg)
{
    const struct cors_values *c = values(arg);
    /* an OPTIONS route of the app's own with a policy: the server answers its preflights */
    if (preflight(req, NULL))
        return 1;
    vary_origin(req, c);
    h2o_iovec_t origin = find_header(req->h2o, NULL, H2O_STRLIT("origin"));
    if (origin.base == NULL || !origin_allowed(c, origin))
        return 0;
    allow_origin(req, c, origin);
    if (c->expose[0] != '\0')
        add(req, H2O_STRLIT("access-control-expose-headers"), c->expose, strlen(c->expose));
    return 0;
}

/* Each header a preflight asks for must be allowed (the policy's list, or any). */
static int headers_allowed(const struct cors_values *c, h2o_iovec_t asked)
{
    if (c->any_header)
        return 1;
    const char *s = asked.base, *end = asked.base + asked.len;
    while (s < end) {
        while (s < end && (*s == ' ' || *s == ','))
            s++;
        const char *e = s;
        while (e < end && *e != ',')
            e++;
        const char *t = e;
        while (t > s && t[-1] == ' ')
            t--;
        if (t > s && !in_list(c->headers, s, (size_t)(t - s), 1))
            return 0;
        s = e;
    }
    return 1;
}

/* A CORS preflight (an OPTIONS request), answered when 1: the unrouted guard, and a route's */
static int preflight(canal_req_t *req, const void *arg)
{
    if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("OPTIONS")))
        return 0;
    h2o_req_t *h = req->h2o;
    h2o_iovec_t origin = find_header(h, NULL, H2O_STRLIT("origin"));
    h2o_iovec_t method = find_header(h, NULL, H2O_STRLIT("access-control-request-method"));
    if (origin.base == NULL || method.base == NULL || method.len == 0)
        return 0;
    /* the route that would serve the announced request */
    canal_match_t m;
    char *scratch = h2o_mem_alloc_pool(&h->pool, req->path.len + 1);
    if (canal_router_match(req->app->router, (canal_str_t){method.base, method.len}, req->path, scratch,
                           req->path.len + 1, &m) != 200)
        return 0;
    const struct cors_state *st = canal__feature_state(req->app, &feature);
    const struct canal__cors *route_policy = m.index < req->app->nendpoints ? st->by_route[m.index] : NULL;
    if (route_policy == NULL)
        return 0;
    const struct cors_values *c = values(route_policy);
    h2o_iovec_t asked = find_header(h, NULL, H2O_STRLIT("access-control-request-headers"));
    vary_origin(req, c);
    add(req, H2O_STRLIT("vary"), H2O_STRLIT("Access-Control-Request-Method, Access-Control-Request-Headers"));
    const char *why = NULL;
    if (!origin_allowed(c, origin))
        why = "the origin is not allowed";
    else if (c->methods[0] != '\0' && !in_list(c->methods, method.base, method.len, 0))
        why = "the method is not allowed";
    else if (asked.base != NULL && !headers_allowed(c, asked))
        why = "a requested header is not allowed";
    if (why != NULL) {
        canal_res_problem(req, 403, "CORS preflight refused: %s", why);
        return 1;
    }
    allow_origin(req, c, origin);
    if (c->methods[0] != '\0')
        add(req, H2O_STRLIT("access-control-allow-methods"), c->methods, strlen(c->methods));
    else
        add(req, H2O_STRLIT("access-control-allow-methods"), method.base, method.len);
    if (asked.base != NULL && asked.len > 0)
        add(req, H2O_STRLIT("access-control-allow-headers"), asked.base, asked.len);
    if (c->max_age[0] != '\0')
        add(req, H2O_STRLIT("access-control-max-age"), c->max_age, strlen(c->max_age));
    canal_res_status(req, 204);
    return 1;
}

/* ---- the feature ---- */

/* Each route's policy: the last rule that covers it; a guard where there is one, and the
 * preflights of routes without an OPTIONS handler answered before the router's own 405 */
static int cors_start(canal_app_t *app, void *st)
{
    struct cors_state *ops = st;
    if ((ops->by_route = calloc(app->nendpoints + 1, sizeof(*ops->by_route))) == NULL) {
        canal__log(app, CANAL_LOG_ERROR, "out of memory for CORS");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < app->nendpoints; i++) {
        const canal_route_t *r = app->endpoints[i].route;
        for (size_t k = 0; k < ops->nrules; k++) { /* in the order given, so a later one wins */
            const struct cors_rule *rule = &ops->rules[k];
            if (rule->route != NULL ? rule->route == r : covers(rule->prefix, canal_route_template(r)))
                ops->by_route[i] = rule->policy;
        }
        if (ops->by_route[i] == NULL)
            continue;
        n++;
        if (canal__endpoint_guard(&app->endpoints[i], GUARD_ORDER, cors_guard, ops->by_route[i]) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many guards", i);
            return -1;
        }
    }
    return n > 0 ? canal__app_unrouted(app, preflight, NULL) : 0;
}

static void cors_dispose(canal_app_t *app, void *st)
{
    struct cors_state *ops = st;
    for (size_t i = 0; i < ops->npolicies; i++)
        cors_free(ops->policies[i]);
    free(ops->policies);
    for (size_t i = 0; i < ops->nrules; i++)
        free(ops->rules[i].prefix);
    free(ops->rules);
    free(ops->by_route);
}

static const struct canal__feature feature = {
    .name = "CORS",
    .size = sizeof(struct cors_state),
    .start = cors_start,
    .dispose = cors_dispose,
};
