/* SPDX-License-Identifier: MIT */
/*
 * Registration of controllers and actions.
 *
 * Every action becomes ordinary routes of the app (canal_app_route()) whose handler is the
 * layer's dispatcher and whose data is the action: an action's own templates (relative to
 * the controller's prefix unless they start with '/'), the prefix itself for an action with
 * no template under a prefixed controller, and otherwise one route per conventional template
 * with {controller} and {action} replaced by the names. Defaults that equal the names add the
 * shorter forms ("Home/Index/{id?}" also registers "Home" and ""). So a request never
 * looks controllers up by name: the router's literal match already did.
 *
 * Parameter declarations are checked once here (defaults, bounds, patterns and allowed
 * values parsed with the type's rules), so binding at request time only compares.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "controller_internal.h"


canal_mvc_t *canal_mvc_create(canal_app_t *app)
{
    canal_mvc_t *mvc = calloc(1, sizeof(*mvc));
    if (mvc != NULL) {
        mvc->app = app;
        mvc->lowercase_urls = 1;
    }
    return mvc;
}

void canal_mvc_lowercase_urls(canal_mvc_t *mvc, int on)
{
    mvc->lowercase_urls = on != 0;
}

/* Copies a controller or action name into a route segment: lower-cased when the mvc says so. */
static void name_segment(char *out, const char *name, size_t n, int lower)
{
    for (size_t i = 0; i < n; i++)
        out[i] = lower ? (char)tolower((unsigned char)name[i]) : name[i];
}

static void free_action(canal_action_t *a)
{
    free(a->routes);
    free(a->chain);
    free(a);
}

void canal_mvc_destroy(canal_mvc_t *mvc)
{
    if (mvc == NULL)
        return;
    for (size_t i = 0; i < mvc->nctrls; i++) {
        canal_controller_t *c = mvc->ctrls[i];
        for (size_t j = 0; j < c->nactions; j++)
            free_action(c->actions[j]);
        if (c->dispose != NULL)
            c->dispose(c->state);
        free(c->actions);
        free(c->name);
        free(c->prefix);
        free(c);
    }
    for (size_t i = 0; i < mvc->nconventional; i++)
        free(mvc->conventional[i]);
    free(mvc->conventional);
    free(mvc->ctrls);
    free(mvc);
}

/* An entry of a filter table that says something (unused entries are all NULL). */
static int filter_used(const canal_filter_t *f)
{
    return f->before != NULL || f->after != NULL || f->cors != NULL;
}

static int add_filter(canal_filter_t *list, size_t *n, const canal_filter_t *f)
{
    if (*n == CANAL_MAX_FILTERS)
        return CANAL_ELIMIT;
    list[(*n)++] = *f;
    return 0;
}

/* Rebuilds every action's filter chain (filters may be added after actions); below. */
static void rebuild_chains(canal_mvc_t *mvc);

int canal_mvc_filter(canal_mvc_t *mvc, const canal_filter_t *filter)
{
    int rc = add_filter(mvc->filters, &mvc->nfilters, filter);
    if (rc == 0)
        rebuild_chains(mvc);
    return rc;
}

int canal_controller_filter(canal_controller_t *c, const canal_filter_t *filter)
{
    int rc = add_filter(c->filters, &c->nfilters, filter);
    if (rc == 0)
        rebuild_chains(c->mvc);
    return rc;
}

static int build_chain(canal_action_t *a)
{
    canal_mvc_t *mvc = a->ctrl->mvc;
    size_t n = mvc->nfilters + a->ctrl->nfilters, k = 0;
    for (size_t i = 0; i < CANAL_MAX_FILTERS; i++)
        n += filter_used(&a->def.filters[i]);
    canal_filter_t *chain = n ? malloc(n * sizeof(*chain)) : NULL;
    if (n > 0 && chain == NULL)
        return CANAL_ENOMEM;
    for (size_t i = 0; i < mvc->nfilters; i++)
        chain[k++] = mvc->filters[i];
    for (size_t i = 0; i < a->ctrl->nfilters; i++)
        chain[k++] = a->ctrl->filters[i];
    for (size_t i = 0; i < CANAL_MAX_FILTERS; i++)
        if (filter_used(&a->def.filters[i]))
            chain[k++] = a->def.filters[i];
    free(a->chain);
    a->chain = chain;
    a->nchain = n;
    return canal__mvc_apply_cors(a, 0);
}

static void rebuild_chains(canal_mvc_t *mvc)
{
    for (size_t i = 0; i < mvc->nctrls; i++)
        for (size_t j = 0; j < mvc->ctrls[i]->nactions; j++)
            build_chain(mvc->ctrls[i]->actions[j]);
}

static int valid_name(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* Replaces [controller] and [action] in text ("[[" and "]]" stand for brackets), the names
 * lower-cased when lower is set. action may be NULL (a controller prefix), and then [action]
 * stays for later. Returns a new string. */
static char *replace_tokens(const char *text, const char *controller, const char *action, int lower,
                            canal_error_info_t *err, int *rc)
{
    size_t cap = strlen(text) * 2 + strlen(controller) + (action ? strlen(action) : 0) + 16, o = 0;
    char *out = malloc(cap);
    if (out == NULL) {
        *rc = canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
        return NULL;
    }
    for (const char *p = text; *p; p++) {
        if ((p[0] == '[' && p[1] == '[') || (p[0] == ']' && p[1] == ']')) {
            if (action == NULL) /* keep the escape for the second pass */
                out[o++] = *p;
            out[o++] = *p++;
            continue;
        }
        if (*p != '[') {
            out[o++] = *p;
            continue;
        }
        const char *end = strchr(p, ']');
        size_t n = end ? (size_t)(end - p - 1) : 0;
        const char *with = NULL;
        int name = 1;
        if (end && n == 10 && strncmp(p + 1, "controller", 10) == 0)
            with = controller;
        else if (end && n == 6 && strncmp(p + 1, "action", 6) == 0)
            with = action ? action : "[action]", name = action != NULL;
        if (with == NULL) {
            free(out);
            *rc = canal_error_set(err, CANAL_ESYNTAX, 0, "'%s': unknown token at byte %zu (known: [controller], [action])",
                       text, (size_t)(p - text));
            return NULL;
        }
        size_t wl = strlen(with);
        if (o + wl + strlen(end) + 1 > cap) {
            char *grown = realloc(out, cap = o + wl + strlen(end) + 64);
            if (grown == NULL) {
                free(out);
                *rc = canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
                return NULL;
            }
            out = grown;
        }
        name_segment(out + o, with, wl, lower && name);
        o += wl;
        p = end;
    }
    out[o] = '\0';
    return out;
}

/* ---- routes ---- */

static int add_route(canal_action_t *a, const char *method, const char *tmpl, const char *name,
                     canal_error_info_t *err)
{
    canal_app_t *app = a->ctrl->mvc->app;
    const canal_route_t **grown = realloc(a->routes, (a->nroutes + 1) * sizeof(*grown));
    if (grown == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    a->routes = grown;
    canal_error_info_t e;
    canal_endpoint_spec_t spec = {.method = method, .tmpl = tmpl, .name = name, .handler = canal__mvc_dispatch, .data = a,
                                  .max_body = a->def.max_body};
    /* the action's arguments, its options, then the controller's of the kinds the action has
     * not: the nearest scope wins, and the route gets the result as its own */
    size_t n = 0;
    if (a->def.args != NULL)
        spec.options[n++] = (canal_route_option_t)CANAL_ARGS(a->def.args);
    for (size_t i = 0; i < CANAL_MAX_ROUTE_OPTIONS && a->def.options[i].kind != NULL; i++) {
        if (n == CANAL_MAX_ROUTE_OPTIONS)
            return canal_error_set(err, CANAL_EINVAL, 0, "%s.%s: more than %d options with its args",
                                   a->ctrl->name, a->def.name, CANAL_MAX_ROUTE_OPTIONS);
        spec.options[n++] = a->def.options[i];
    }
    for (size_t i = 0; i < CANAL_MAX_ROUTE_OPTIONS && a->ctrl->options[i].kind != NULL; i++) {
        size_t k = 0;
        while (k < n && spec.options[k].kind != a->ctrl->options[i].kind)
            k++;
        if (k == n && n == CANAL_MAX_ROUTE_OPTIONS)
            return canal_error_set(err, CANAL_EINVAL, 0, "%s.%s: more than %d options with the controller's",
                                   a->ctrl->name, a->def.name, CANAL_MAX_ROUTE_OPTIONS);
        if (k == n)
            spec.options[n++] = a->ctrl->options[i];
    }
    int rc = canal_app_route(app, &spec, &a->routes[a->nroutes], &e);
    if (rc != 0)
        return canal_error_set(err, rc, 0, "%s.%s: %s %s: %s", a->ctrl->name, a->def.name, method, tmpl, e.message);
    a->nroutes++;
    rc = canal__mvc_apply_cors(a, a->nroutes - 1);
    return rc != 0 ? canal_error_set(err, rc, 0, "%s.%s: CORS policy: %s", a->ctrl->name, a->def.name, canal_strerror(rc)) : 0;
}

/* Calls add_route for every method of the action. */
static int add_for_methods(canal_action_t *a, const char *tmpl, const char *name, canal_error_info_t *err)
{
    const char *m = a->def.methods ? a->def.methods : "GET";
    while (*m) {
        char method[32];
        size_t n = strcspn(m, ",");
        const char *start = m;
        while (n > 0 && *start == ' ')
            start++, n--;
        size_t k = n;
        while (k > 0 && start[k - 1] == ' ')
            k--;
        if (k == 0 || k >= sizeof(method))
            return canal_error_set(err, CANAL_ESYNTAX, 0, "%s.%s: bad methods '%s'", a->ctrl->name, a->def.name, a->def.methods);
        memcpy(method, start, k);
        method[k] = '\0';
        int rc = add_route(a, method, tmpl, name, err);
        if (rc != 0)
            return rc;
        m = start + n;
        if (*m == ',')
            m++;
    }
    return 0;
}

/* One conventional template for one action: see the comment at the top. */
static int add_conventional(canal_action_t *a, const char *conv, canal_error_info_t *err)
{
    char segs[CANAL_ROUTER_MAX_SEGMENTS][128];
    int omittable[CANAL_ROUTER_MAX_SEGMENTS], named[CANAL_ROUTER_MAX_SEGMENTS];
    size_t n = 0;
    const char *p = conv[0] == '/' ? conv + 1 : conv;
    while (*p && n < CANAL_ROUTER_MAX_SEGMENTS) {
        size_t len = strcspn(p, "/");
        if (len >= sizeof(segs[0]))
            return canal_error_set(err, CANAL_ELIMIT, 0, "conventional route '%s': segment too long", conv);
        named[n] = 0;
        omittable[n] = 0;
        const char *which = NULL;
        if (len >= 12 && strncmp(p, "{controller", 11) == 0 && (p[11] == '}' || p[11] == '='))
            which = a->ctrl->name;
        else if (len >= 8 && strncmp(p, "{action", 7) == 0 && (p[7] == '}' || p[7] == '='))
            which = a->def.name;
        if (which != NULL) {
            const char *eq = memchr(p, '=', len);
            named[n] = 1;
            omittable[n] = eq != NULL && (size_t)(p + len - 1 - (eq + 1)) == strlen(which) &&
                           strncasecmp(eq + 1, which, strlen(which)) == 0;
            size_t wl = strlen(which) < sizeof(segs[n]) - 1 ? strlen(which) : sizeof(segs[n]) - 1;
            name_segment(segs[n], which, wl, a->ctrl->mvc->lowercase_urls);
            segs[n][wl] = '\0';
        } else {
            omittable[n] = len > 2 && p[0] == '{' && (p[len - 2] == '?' || memchr(p, '=', len) || p[1] == '*');
            snprintf(segs[n], sizeof(segs[n]), "%.*s", (int)len, p);
        }
        n++;
        p += len;
        if (*p == '/')
            p++;
    }
    /* the whole template, then the shorter forms where a left-out name equals its default */
    char tmpl[CANAL_ROUTER_MAX_SEGMENTS * 129 + 1];
    for (size_t k = n + 1; k-- > 0;) {
        if (k < n) {
            int rest_omittable = 1;
            for (size_t i = k; i < n; i++)
                rest_omittable &= omittable[i];
            if (!named[k] || !rest_omittable)
                continue;
        }
        size_t o = 0;
        tmpl[0] = '\0';
        for (size_t i = 0; i < k; i++)
            o += (size_t)snprintf(tmpl + o, sizeof(tmpl) - o, "%s%s", i ? "/" : "", segs[i]);
        int rc = add_for_methods(a, tmpl[0] ? tmpl : "/", k == n ? a->def.route_name : NULL, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int action_routes(canal_action_t *a, const char *conv_only, canal_error_info_t *err)
{
    canal_controller_t *c = a->ctrl;
    int rc = 0, own = 0;
    if (conv_only != NULL)
        return add_conventional(a, conv_only, err);
    for (size_t i = 0; i < CANAL_ACTION_MAX_ROUTES && a->def.routes[i] != NULL; i++) {
        const char *t = a->def.routes[i];
        char *joined;
        own = 1;
        if (t[0] == '/' || c->prefix == NULL) {
            joined = strdup(t);
        } else {
            size_t len = strlen(c->prefix) + strlen(t) + 2;
            if ((joined = malloc(len)) != NULL)
                snprintf(joined, len, "%s%s%s", c->prefix, *t ? "/" : "", t);
        }
        if (joined == NULL)
            return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
        char *full = replace_tokens(joined, c->name, a->def.name, c->mvc->lowercase_urls, err, &rc);
        free(joined);
        if (full == NULL)
            return rc;
        rc = add_for_methods(a, full, i == 0 ? a->def.route_name : NULL, err);
        free(full);
        if (rc != 0)
            return rc;
    }
    if (own)
        return 0;
    if (c->prefix != NULL) {
        char *full = replace_tokens(c->prefix, c->name, a->def.name, c->mvc->lowercase_urls, err, &rc);
        if (full == NULL)
            return rc;
        rc = add_for_methods(a, full, a->def.route_name, err);
        free(full);
        return rc;
    }
    for (size_t i = 0; i < c->mvc->nconventional && rc == 0; i++)
        rc = add_conventional(a, c->mvc->conventional[i], err);
    return rc;
}

/* An action with no template of its own under a controller without a prefix. */
static int is_conventional(const canal_action_t *a)
{
    return a->def.routes[0] == NULL && a->ctrl->prefix == NULL;
}

int canal_controller_add_action(canal_controller_t *c, const canal_action_def_t *def, canal_error_info_t *err)
{
    if (!valid_name(def->name))
        return canal_error_set(err, CANAL_EINVAL, 0, "%s: action name '%s' must be letters, digits or '_'", c->name,
                    def->name ? def->name : "(null)");
    if (def->handler == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "%s.%s: no handler", c->name, def->name);
    for (size_t j = 0; j < c->nactions; j++)
        if (strcasecmp(c->actions[j]->def.name, def->name) == 0)
            return canal_error_set(err, CANAL_EEXIST, 0, "%s.%s: the controller has this action already", c->name, def->name);
    canal_action_t *a = calloc(1, sizeof(*a));
    canal_action_t **grown = realloc(c->actions, (c->nactions + 1) * sizeof(*grown));
    if (grown != NULL)
        c->actions = grown;
    if (a == NULL || grown == NULL) {
        free(a);
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    }
    a->def = *def;
    a->ctrl = c;
    int rc = 0;
    canal_error_info_t e;
    if (def->args != NULL && (rc = canal_app_schema(c->mvc->app, def->args, &e)) != 0)
        rc = canal_error_set(err, rc, 0, "%s.%s: %s", c->name, def->name, e.message);
    if (rc == 0)
        rc = build_chain(a);
    if (rc == 0)
        rc = action_routes(a, NULL, err);
    if (rc != 0) {
        /* routes the router took stay there; their data must stay valid: keep the action */
        if (a->nroutes == 0) {
            free_action(a);
            return rc;
        }
    }
    c->actions[c->nactions++] = a;
    return rc;
}

canal_controller_t *canal_mvc_controller(canal_mvc_t *mvc, const char *name, const char *prefix, void *state,
                                         void (*dispose)(void *), canal_error_info_t *err)
{
    if (!valid_name(name)) {
        canal_error_set(err, CANAL_EINVAL, 0, "controller name '%s' must be letters, digits or '_'", name ? name : "(null)");
        return NULL;
    }
    for (size_t i = 0; i < mvc->nctrls; i++)
        if (strcasecmp(mvc->ctrls[i]->name, name) == 0) {
            canal_error_set(err, CANAL_EEXIST, 0, "controller %s is registered already", name);
            return NULL;
        }
    canal_controller_t *c = calloc(1, sizeof(*c));
    canal_controller_t **grown = realloc(mvc->ctrls, (mvc->nctrls + 1) * sizeof(*grown));
    if (grown != NULL)
        mvc->ctrls = grown;
    int rc = 0;
    if (c == NULL || grown == NULL || (c->name = strdup(name)) == NULL)
        goto oom;
    if (prefix != NULL && *prefix != '\0') {
        while (*prefix == '/')
            prefix++;
        if ((c->prefix = replace_tokens(prefix, name, NULL, mvc->lowercase_urls, err, &rc)) == NULL) {
            free(c->name);
            free(c);
            return NULL;
        }
        size_t n = strlen(c->prefix);
        while (n > 0 && c->prefix[n - 1] == '/')
            c->prefix[--n] = '\0';
    }
    c->mvc = mvc;
    c->state = state;
    c->dispose = dispose;
    mvc->ctrls[mvc->nctrls++] = c;
    return c;
oom:
    if (c != NULL)
        free(c->name);
    free(c);
    canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    return NULL;
}

int canal_mvc_add_controller(canal_mvc_t *mvc, const canal_controller_def_t *def, canal_controller_t **out,
                             canal_error_info_t *err)
{
    canal_error_info_t local;
    if (err == NULL)
        err = &local; /* to return the right code */
    canal_controller_t *c = canal_mvc_controller(mvc, def->name, def->prefix, def->state, def->dispose, err);
    if (c == NULL)
        return err->code;
    memcpy(c->options, def->options, sizeof(c->options));
    for (size_t i = 0; i < CANAL_MAX_FILTERS; i++)
        if (filter_used(&def->filters[i]))
            c->filters[c->nfilters++] = def->filters[i];
    for (const canal_action_def_t *a = def->actions; a != NULL && a->name != NULL; a++) {
        int rc = canal_controller_add_action(c, a, err);
        if (rc != 0)
            return rc;
    }
    if (out != NULL)
        *out = c;
    return 0;
}

int canal_mvc_map_route(canal_mvc_t *mvc, const char *tmpl, canal_error_info_t *err)
{
    if (strstr(tmpl, "{controller") == NULL || strstr(tmpl, "{action") == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "conventional route '%s' needs {controller} and {action}", tmpl);
    char **grown = realloc(mvc->conventional, (mvc->nconventional + 1) * sizeof(*grown));
    if (grown == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    mvc->conventional = grown;
    if ((mvc->conventional[mvc->nconventional] = strdup(tmpl)) == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    mvc->nconventional++;
    /* actions registered before this call get its routes now */
    for (size_t i = 0; i < mvc->nctrls; i++)
        for (size_t j = 0; j < mvc->ctrls[i]->nactions; j++)
            if (is_conventional(mvc->ctrls[i]->actions[j])) {
                int rc = action_routes(mvc->ctrls[i]->actions[j], tmpl, err);
                if (rc != 0)
                    return rc;
            }
    return 0;
}

static const canal_action_t *find_action(const canal_mvc_t *mvc, const char *controller, const char *action)
{
    for (size_t i = 0; i < mvc->nctrls; i++) {
        if (strcasecmp(mvc->ctrls[i]->name, controller) != 0)
            continue;
        for (size_t j = 0; j < mvc->ctrls[i]->nactions; j++)
            if (strcasecmp(mvc->ctrls[i]->actions[j]->def.name, action) == 0)
                return mvc->ctrls[i]->actions[j];
    }
    return NULL;
}

int canal_mvc_link(const canal_mvc_t *mvc, const char *controller, const char *action, const canal_kv_t *values,
                   size_t nvalues, char *buf, size_t size)
{
    const canal_action_t *a = find_action(mvc, controller, action);
    if (a == NULL || a->nroutes == 0)
        return CANAL_ENOTFOUND;
    return canal_route_link(a->routes[0], values, nvalues, buf, size);
}

size_t canal_mvc_controller_count(const canal_mvc_t *mvc)
{
    return mvc->nctrls;
}

const canal_controller_t *canal_mvc_controller_at(const canal_mvc_t *mvc, size_t i)
{
    return i < mvc->nctrls ? mvc->ctrls[i] : NULL;
}

const char *canal_controller_name(const canal_controller_t *c)
{
    return c->name;
}

size_t canal_controller_action_count(const canal_controller_t *c)
{
    return c->nactions;
}

const canal_action_t *canal_controller_action_at(const canal_controller_t *c, size_t j)
{
    return j < c->nactions ? c->actions[j] : NULL;
}

const canal_action_def_t *canal_action_def(const canal_action_t *a)
{
    return &a->def;
}

size_t canal_action_route_count(const canal_action_t *a)
{
    return a->nroutes;
}

const canal_route_t *canal_action_route_at(const canal_action_t *a, size_t i)
{
    return i < a->nroutes ? a->routes[i] : NULL;
}
