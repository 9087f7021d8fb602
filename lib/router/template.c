/* SPDX-License-Identifier: MIT */
/*
 * Route template parsing, and the constraint checks the matcher and link generation share.
 *
 * A template is split on '/' (a '/' inside a parameter, say in a regex, does not split), each
 * segment is either a literal (with "{{" and "}}" standing for braces) or a whole parameter
 * "{...}". Parameters read as: ['*' | '**'] name (':' constraint ['(' argument ')'])* ['?' |
 * '=' default]. A constraint argument runs to the first ')' followed by ':', '?', '=' or the
 * end of the parameter, so regexes may hold parentheses. Every error names the byte position.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "router_internal.h"

int canal__error(canal_error_info_t *err, int code, size_t pos, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        err->code = code;
        err->position = pos;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A growable byte buffer for the unescaped text of segments. */
struct sbuf {
    char *p;
    size_t len, cap;
};

static int sbuf_put(struct sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return CANAL_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static int strict_int64(const char *s, size_t n, int64_t *out)
{
    return canal_parse_int64((canal_str_t){s, n}, out);
}

static const struct {
    const char *name;
    int type;
    int nargs; /* 0 none, 1 one integer, 2 two integers, 3 one or two integers, -1 regex */
} constraint_table[] = {
    {"int", CONS_INT, 0},         {"long", CONS_LONG, 0},
    {"bool", CONS_BOOL, 0},       {"double", CONS_DOUBLE, 0},
    {"guid", CONS_GUID, 0},       {"alpha", CONS_ALPHA, 0},
    {"min", CONS_MIN, 1},         {"max", CONS_MAX, 1},
    {"range", CONS_RANGE, 2},     {"length", CONS_LENGTH, 3},
    {"minlength", CONS_MINLENGTH, 1}, {"maxlength", CONS_MAXLENGTH, 1},
    {"regex", CONS_REGEX, -1},    {"utf8", CONS_UTF8, 0},
};

static int parse_constraint(struct constraint *c, const char *name, size_t nlen, const char *arg,
                            size_t alen, int has_arg, int fold, size_t pos,
                            canal_error_info_t *err)
{
    size_t i;
    for (i = 0; i < sizeof(constraint_table) / sizeof(constraint_table[0]); i++)
        if (strlen(constraint_table[i].name) == nlen &&
            strncasecmp(constraint_table[i].name, name, nlen) == 0)
            break;
    if (i == sizeof(constraint_table) / sizeof(constraint_table[0]))
        return canal__error(err, CANAL_EINVAL, pos, "unknown constraint '%.*s'", (int)nlen, name);
    memset(c, 0, sizeof(*c));
    c->type = constraint_table[i].type;
    int nargs = constraint_table[i].nargs;
    if (nargs == 0) {
        if (has_arg)
            return canal__error(err, CANAL_EINVAL, pos, "constraint '%.*s' takes no argument",
                                (int)nlen, name);
        return 0;
    }
    if (!has_arg)
        return canal__error(err, CANAL_EINVAL, pos, "constraint '%.*s' needs an argument",
                            (int)nlen, name);
    if (nargs == -1) {
        /* case-insensitive as the router is (ASP.NET Core's always is): regex.c */
        char *re_text = strndup(arg, alen);
        if (re_text == NULL)
            return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
        int rc = canal__regex_compile(c, re_text, alen, fold, pos, err);
        if (rc != 0) {
            free(re_text);
            return rc;
        }
        c->re_text = re_text; /* kept for introspection (OpenAPI patterns) */
        return 0;
    }
    const char *comma = memchr(arg, ',', alen);
    int two = comma != NULL;
    if ((nargs == 1 && two) || (nargs == 2 && !two))
        return canal__error(err, CANAL_EINVAL, pos, "constraint '%.*s' takes %s", (int)nlen,
                            name, nargs == 1 ? "one integer" : "two integers");
    size_t first_len = two ? (size_t)(comma - arg) : alen;
    if (strict_int64(arg, first_len, &c->a) != 0 ||
        (two && strict_int64(comma + 1, alen - first_len - 1, &c->b) != 0))
        return canal__error(err, CANAL_EINVAL, pos, "constraint '%.*s': '%.*s' is not an integer",
                            (int)nlen, name, (int)alen, arg);
    if (c->type == CONS_LENGTH && !two)
        c->b = c->a;
    if ((c->type == CONS_RANGE || c->type == CONS_LENGTH) && c->a > c->b)
        return canal__error(err, CANAL_EINVAL, pos, "constraint '%.*s': empty range", (int)nlen,
                            name);
    if ((c->type == CONS_LENGTH || c->type == CONS_MINLENGTH || c->type == CONS_MAXLENGTH) &&
        c->a < 0)
        return canal__error(err, CANAL_EINVAL, pos, "constraint '%.*s': negative length",
                            (int)nlen, name);
    return 0;
}

/* Appends a constraint to a node key: its name, and its arguments by value (min(01) is min(1),
 * length(3) is length(3,3)), a regex as written; keys are equal when constraints are. */
static int sig_put(struct sbuf *sig, const struct constraint *c)
{
    size_t i = 0;
    while (constraint_table[i].type != c->type)
        i++;
    char buf[64];
    const char *name = constraint_table[i].name;
    if (sig->len > 0 && sbuf_put(sig, ":", 1) != 0)
        return CANAL_ENOMEM;
    if (constraint_table[i].nargs == -1)
        return sbuf_put(sig, name, strlen(name)) || sbuf_put(sig, "(", 1) ||
                       sbuf_put(sig, c->re_text, strlen(c->re_text)) || sbuf_put(sig, ")", 1)
                   ? CANAL_ENOMEM
                   : 0;
    if (constraint_table[i].nargs == 0)
        snprintf(buf, sizeof(buf), "%s", name);
    else if (constraint_table[i].nargs == 1)
        snprintf(buf, sizeof(buf), "%s(%lld)", name, (long long)c->a);
    else
        snprintf(buf, sizeof(buf), "%s(%lld,%lld)", name, (long long)c->a, (long long)c->b);
    return sbuf_put(sig, buf, strlen(buf));
}

static void free_constraints(struct constraint *cons, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        canal__regex_free(&cons[i]);
        free(cons[i].re_text);
    }
    free(cons);
}

static void free_segment(struct tseg *s)
{
    for (size_t i = 0; i < s->nparts; i++)
        free_segment(&s->parts[i]);
    free(s->parts);
    free(s->text);
    free(s->raw);
    free_constraints(s->cons, s->ncons);
}

void canal__route_free_segments(struct canal_route *route)
{
    for (size_t i = 0; i < route->nsegs; i++)
        free_segment(&route->segs[i]);
    free(route->segs);
    route->segs = NULL;
    route->nsegs = 0;
    for (size_t i = 0; i < route->nparams; i++) {
        free(route->params[i].name);
        free(route->params[i].def);
    }
    route->nparams = 0;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* Parses the unescaped text of one parameter ("id:int?") into seg and a new route parameter.
 * pos is the byte position of its '{' in the template. */
static int parse_param(struct canal_route *route, struct tseg *seg, const char *t, size_t m,
                       size_t pos, int fold, canal_error_info_t *err)
{
    size_t i = 0;
    int catchall = 0, keep_slash = 0;
    if (i < m && t[i] == '*') {
        catchall = 1;
        i++;
        if (i < m && t[i] == '*') {
            keep_slash = 1;
            i++;
        }
    }
    size_t name_start = i;
    while (i < m && t[i] != ':' && t[i] != '=' && t[i] != '?')
        i++;
    if (i == name_start)
        return canal__error(err, CANAL_ESYNTAX, pos + 1 + i, "parameter without a name");
    for (size_t k = name_start; k < i; k++)
        if (!name_char(t[k]))
            return canal__error(err, CANAL_ESYNTAX, pos + 1 + k,
                                "'%c' is not allowed in a parameter name", t[k]);
    /* names compare ASCII case-insensitively, as route values are looked up (and as ASP.NET
     * Core refuses {Controller}.mvc/{id}/{controller}) */
    for (size_t k = 0; k < route->nparams; k++)
        if (route->params[k].name_len == i - name_start &&
            strncasecmp(route->params[k].name, t + name_start, i - name_start) == 0)
            return canal__error(err, CANAL_ESYNTAX, pos + 1 + name_start,
                                "parameter '%.*s' appears twice", (int)(i - name_start),
                                t + name_start);
    if (route->nparams == CANAL_ROUTER_MAX_PARAMS)
        return canal__error(err, CANAL_ELIMIT, pos, "more than %d parameters",
                            CANAL_ROUTER_MAX_PARAMS);

    struct rparam *p = &route->params[route->nparams];
    memset(p, 0, sizeof(*p));
    p->name_len = i - name_start;
    if ((p->name = strndup(t + name_start, i - name_start)) == NULL)
        return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
    p->seg = route->nsegs - 1; /* the caller counted this segment already */
    p->keep_slash = keep_slash;
    route->nparams++; /* from here on the parameter is freed with the route */
    seg->kind = catchall ? SEG_CATCHALL : SEG_PARAM;
    seg->param = (int)(route->nparams - 1);

    struct sbuf sig = {0};
    int rc = 0;
    while (i < m && t[i] == ':') {
        size_t cpos = i + 1, k = i + 1;
        while (k < m && (isalpha((unsigned char)t[k]) || (k > cpos && isdigit((unsigned char)t[k]))))
            k++; /* a name: letters, then digits too ("utf8") */
        const char *arg = NULL;
        size_t alen = 0, next = k;
        int has_arg = 0;
        if (k < m && t[k] == '(') {
            size_t e = k + 1;
            while (e < m && !(t[e] == ')' && (e + 1 == m || t[e + 1] == ':' || t[e + 1] == '?' ||
                                              t[e + 1] == '=')))
                e++;
            if (e == m) {
                rc = canal__error(err, CANAL_ESYNTAX, pos + 1 + k, "'(' without ')'");
                goto out;
            }
            arg = t + k + 1;
            alen = e - k - 1;
            has_arg = 1;
            next = e + 1;
        }
        if (k == cpos) {
            rc = canal__error(err, CANAL_ESYNTAX, pos + 1 + cpos, "empty constraint name");
            goto out;
        }
        struct constraint *grown = realloc(seg->cons, (seg->ncons + 1) * sizeof(*grown));
        if (grown == NULL) {
            rc = canal__error(err, CANAL_ENOMEM, pos, "out of memory");
            goto out;
        }
        seg->cons = grown;
        if ((rc = parse_constraint(&seg->cons[seg->ncons], t + cpos, k - cpos, arg, alen, has_arg,
                                   fold, pos + 1 + cpos, err)) != 0)
            goto out;
        seg->ncons++;
        if ((rc = sig_put(&sig, &seg->cons[seg->ncons - 1])) != 0) {
            rc = canal__error(err, CANAL_ENOMEM, pos, "out of memory");
            goto out;
        }
        i = next;
    }
    if (i < m) {
        if (t[i] == '?' && i + 1 == m) {
            if (catchall) {
                rc = canal__error(err, CANAL_ESYNTAX, pos + 1 + i,
                                  "a catch-all parameter cannot be optional");
                goto out;
            }
            p->optional = 1;
        } else if (t[i] == '=') {
            if ((p->def = strndup(t + i + 1, m - i - 1)) == NULL) {
                rc = canal__error(err, CANAL_ENOMEM, pos, "out of memory");
                goto out;
            }
        } else {
            rc = canal__error(err, CANAL_ESYNTAX, pos + 1 + i, "unexpected '%c' in parameter",
                              t[i]);
            goto out;
        }
    }
    if (sig.p == NULL && (rc = sbuf_put(&sig, "", 0)) != 0) {
        rc = canal__error(err, CANAL_ENOMEM, pos, "out of memory");
        goto out;
    }
    seg->text = sig.p;
    seg->len = sig.len;
    return 0;
out:
    free(sig.p);
    return rc;
}

/* Reads the parameter whose '{' is at tmpl[i] into text, its doubled braces unescaped.
 * Returns the index of its closing '}', or sets rc (and err) and returns 0. */
static size_t read_param(const char *tmpl, size_t n, size_t i, struct sbuf *text, int *rc,
                         canal_error_info_t *err)
{
    size_t j = i + 1;
    text->len = 0;
    for (;;) {
        if (j == n) {
            *rc = canal__error(err, CANAL_ESYNTAX, i, "'{' without '}'");
            return 0;
        }
        size_t step = 1;
        if ((tmpl[j] == '}' || tmpl[j] == '{') && j + 1 < n && tmpl[j + 1] == tmpl[j]) {
            step = 2;
        } else if (tmpl[j] == '}') {
            return j;
        } else if (tmpl[j] == '{') {
            *rc = canal__error(err, CANAL_ESYNTAX, j, "unexpected '{' in a parameter");
            return 0;
        }
        if ((*rc = sbuf_put(text, tmpl + j, 1)) != 0) {
            *rc = canal__error(err, CANAL_ENOMEM, i, "out of memory");
            return 0;
        }
        j += step;
    }
}

/* Reads literal text from tmpl[*at] up to a '/', a parameter or the end, into text (unescaped). */
static int read_literal(const char *tmpl, size_t n, size_t *at, struct sbuf *text,
                        canal_error_info_t *err)
{
    size_t i = *at;
    text->len = 0;
    while (i < n && tmpl[i] != '/') {
        char c = tmpl[i];
        if ((c == '{' || c == '}') && i + 1 < n && tmpl[i + 1] == c)
            i++;
        else if (c == '{')
            break;
        else if (c == '}')
            return canal__error(err, CANAL_ESYNTAX, i, "'}' without '{'");
        else if (c == '?')
            return canal__error(err, CANAL_ESYNTAX, i, "'?' is not allowed in a template");
        if (sbuf_put(text, &c, 1) != 0)
            return canal__error(err, CANAL_ENOMEM, i, "out of memory");
        i++;
    }
    if (sbuf_put(text, "", 0) != 0)
        return canal__error(err, CANAL_ENOMEM, i, "out of memory");
    *at = i;
    return 0;
}

/* The rules of a complex segment (as ASP.NET Core's): no catch-all and no default in it, no
 * two parameters in a row, and an optional parameter only at its end, after a '.'. Then its
 * node key: every part as a kind ('L' literal, 'P' parameter, 'O' optional), a length and its
 * text (literals folded when fold, parameters by their constraints), so that two segments
 * share a node exactly when they match the same values. */
static int complex_segment(struct canal_route *route, struct tseg *seg, const char *tmpl,
                           size_t end, int fold, canal_error_info_t *err)
{
    struct sbuf key = {0};
    int rc = sbuf_put(&key, "/", 1);
    for (size_t k = 0; k < seg->nparts && rc == 0; k++) {
        struct tseg *part = &seg->parts[k];
        if (part->kind == SEG_LITERAL) {
            char head[32];
            snprintf(head, sizeof(head), "L%zu:", part->len);
            rc = sbuf_put(&key, head, strlen(head));
            for (size_t x = 0; x < part->len && rc == 0; x++) {
                char c = fold ? (char)canal__lower((unsigned char)part->text[x]) : part->text[x];
                rc = sbuf_put(&key, &c, 1);
            }
            continue;
        }
        struct rparam *p = &route->params[part->param];
        const char *why = NULL;
        if (part->kind == SEG_CATCHALL)
            why = "catch-all '%s' must be a whole segment";
        else if (p->def != NULL)
            why = "'%s' has a default: it must be a whole segment";
        else if (p->optional && k + 1 != seg->nparts)
            why = "optional '%s' must end its segment";
        else if (p->optional && !(seg->parts[k - 1].len == 1 && seg->parts[k - 1].text[0] == '.'))
            why = "only '.' may come before optional '%s' in a segment";
        if (why != NULL) {
            free(key.p);
            return canal__error(err, CANAL_ESYNTAX, part->pos, why, p->name);
        }
        p->complex = 1;
        p->part = (uint8_t)k;
        part->optional = p->optional;
        char head[32];
        snprintf(head, sizeof(head), "%c%zu:", p->optional ? 'O' : 'P', part->len);
        if ((rc = sbuf_put(&key, head, strlen(head))) == 0)
            rc = sbuf_put(&key, part->text, part->len);
    }
    if (rc != 0 || (seg->raw = strndup(tmpl + seg->pos, end - seg->pos)) == NULL) {
        free(key.p);
        return canal__error(err, CANAL_ENOMEM, seg->pos, "out of memory");
    }
    seg->kind = SEG_COMPLEX;
    seg->text = key.p;
    seg->len = key.len;
    seg->param = -1;
    for (size_t k = 0; k < seg->nparts && seg->param < 0; k++)
        if (seg->parts[k].kind != SEG_LITERAL)
            seg->param = seg->parts[k].param;
    return 0;
}

/* One segment, from tmpl[*at] up to the next '/' or the end: its literal and parameter parts.
 * The caller counted the segment in route->nsegs already (it is freed with the route). */
static int parse_segment(struct canal_route *route, struct tseg *seg, const char *tmpl, size_t n,
                         size_t *at, int fold, canal_error_info_t *err)
{
    size_t i = *at;
    struct sbuf text = {0};
    int rc = 0;
    if ((seg->parts = calloc(CANAL__MAX_PARTS, sizeof(*seg->parts))) == NULL)
        return canal__error(err, CANAL_ENOMEM, i, "out of memory");
    while (i < n && tmpl[i] != '/') {
        struct tseg *part = &seg->parts[seg->nparts];
        int is_param = tmpl[i] == '{' && !(i + 1 < n && tmpl[i + 1] == '{');
        if (is_param && seg->nparts > 0 && seg->parts[seg->nparts - 1].kind != SEG_LITERAL) {
            rc = canal__error(err, CANAL_ESYNTAX, i,
                              "two parameters in a row: a literal must separate them");
            break;
        }
        if (seg->nparts == CANAL__MAX_PARTS) {
            rc = canal__error(err, CANAL_ELIMIT, i, "more than %d parameters",
                              CANAL_ROUTER_MAX_PARAMS);
            break;
        }
        part->pos = i;
        seg->nparts++;
        if (is_param) {
            size_t j = read_param(tmpl, n, i, &text, &rc, err);
            if (rc != 0 || (rc = parse_param(route, part, text.p ? text.p : "", text.len, i, fold, err)) != 0)
                break;
            i = j + 1;
        } else {
            if ((rc = read_literal(tmpl, n, &i, &text, err)) != 0)
                break;
            part->kind = SEG_LITERAL;
            part->text = text.p;
            part->len = text.len;
            text = (struct sbuf){0};
        }
    }
    free(text.p);
    if (rc == 0 && seg->nparts > 1) {
        rc = complex_segment(route, seg, tmpl, i, fold, err);
    } else if (rc == 0) { /* one part (or none: the empty last segment of a strict template) */
        struct tseg *parts = seg->parts;
        size_t pos = seg->pos;
        if (seg->nparts == 1)
            *seg = parts[0];
        else if ((seg->text = calloc(1, 1)) == NULL)
            rc = canal__error(err, CANAL_ENOMEM, i, "out of memory");
        if (seg->nparts == 0)
            seg->parts = NULL;
        seg->pos = pos;
        free(parts);
    }
    *at = i;
    return rc;
}

int canal__template_parse(struct canal_route *route, const char *tmpl, int strict_slash, int fold,
                          canal_error_info_t *err)
{
    size_t n = strlen(tmpl), i = 0, cap = 0;
    int rc = 0;

    if (n > 0 && tmpl[0] == '/')
        i = 1;
    if (i == n)
        return 0; /* the root: no segments */
    for (;;) {
        /* one segment, starting at i */
        if (i < n && tmpl[i] == '/')
            return canal__error(err, CANAL_ESYNTAX, i, "empty segment: '/' follows '/'");
        if (route->nsegs == CANAL_ROUTER_MAX_SEGMENTS)
            return canal__error(err, CANAL_ELIMIT, i, "more than %d segments",
                                CANAL_ROUTER_MAX_SEGMENTS);
        if (route->nsegs == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            struct tseg *grown = realloc(route->segs, ncap * sizeof(*grown));
            if (grown == NULL)
                return canal__error(err, CANAL_ENOMEM, i, "out of memory");
            route->segs = grown;
            cap = ncap;
        }
        struct tseg *seg = &route->segs[route->nsegs++]; /* freed with the route from here on */
        memset(seg, 0, sizeof(*seg));
        seg->pos = i;
        if ((rc = parse_segment(route, seg, tmpl, n, &i, fold, err)) != 0)
            return rc;
        if (i == n)
            break;
        i++; /* the '/' */
        if (i == n && !strict_slash)
            break; /* a trailing '/' means nothing unless the policy is strict */
        /* strict: a trailing '/' makes an empty last literal segment */
    }

    /* Each parameter's constraints, now that the segments stay where they are. */
    for (size_t k = 0; k < route->nparams; k++) {
        struct rparam *p = &route->params[k];
        const struct tseg *s = &route->segs[p->seg];
        if (p->complex)
            s = &s->parts[p->part];
        p->cons = s->cons;
        p->ncons = s->ncons;
    }

    /* Which trailing segments may be left out, and are the optional ones all among them? */
    route->first_omittable = route->nsegs;
    while (route->first_omittable > 0) {
        const struct tseg *s = &route->segs[route->first_omittable - 1];
        if (s->kind == SEG_LITERAL || s->kind == SEG_COMPLEX)
            break;
        const struct rparam *p = &route->params[s->param];
        if (s->kind != SEG_CATCHALL && !p->optional && p->def == NULL)
            break;
        route->first_omittable--;
    }
    for (size_t k = 0; k < route->nsegs; k++) {
        const struct tseg *s = &route->segs[k];
        if (s->kind == SEG_CATCHALL && k + 1 != route->nsegs)
            return canal__error(err, CANAL_ESYNTAX, s->pos,
                                "catch-all '%s' must be the last segment",
                                route->params[s->param].name);
        if (s->kind == SEG_PARAM && route->params[s->param].optional && k < route->first_omittable)
            return canal__error(err, CANAL_ESYNTAX, s->pos,
                                "optional '%s' must be followed only by optional segments",
                                route->params[s->param].name);
    }
    return 0;
}

static int guid_ok(canal_str_t v)
{
    const char *s = v.base;
    size_t n = v.len;
    if (n == 38 && ((s[0] == '{' && s[37] == '}') || (s[0] == '(' && s[37] == ')'))) {
        s++;
        n = 36;
    }
    if (n == 32) {
        for (size_t i = 0; i < 32; i++)
            if (!isxdigit((unsigned char)s[i]))
                return 0;
        return 1;
    }
    if (n != 36)
        return 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!isxdigit((unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

size_t canal_str_chars(canal_str_t v)
{
    /* A continuation byte counts only when a lead byte announced it; a stray one is a
     * character of its own, or a value of a thousand "%80" would pass maxlength(3). */
    size_t n = 0;
    int need = 0; /* continuation bytes the last lead byte announced and not yet seen */
    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)v.base[i];
        if (need > 0 && (c & 0xC0) == 0x80) {
            need--;
            continue;
        }
        n++;
        need = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
    }
    return n;
}

static int64_t char_count(canal_str_t v)
{
    return (int64_t)canal_str_chars(v);
}

int canal__constraints_ok(const struct constraint *cons, size_t ncons, canal_str_t v)
{
    for (size_t i = 0; i < ncons; i++) {
        const struct constraint *c = &cons[i];
        int64_t x;
        int32_t x32;
        double d;
        int b;
        switch (c->type) {
        case CONS_INT:
            if (canal_parse_int32(v, &x32) != 0)
                return 0;
            break;
        case CONS_LONG:
            if (canal_parse_int64(v, &x) != 0)
                return 0;
            break;
        case CONS_BOOL:
            if (canal_parse_bool(v, &b) != 0)
                return 0;
            break;
        case CONS_DOUBLE:
            if (canal_parse_double(v, &d) != 0)
                return 0;
            break;
        case CONS_GUID:
            if (!guid_ok(v))
                return 0;
            break;
        case CONS_ALPHA:
            if (v.len == 0)
                return 0;
            for (size_t k = 0; k < v.len; k++)
                if (!((v.base[k] >= 'a' && v.base[k] <= 'z') || (v.base[k] >= 'A' && v.base[k] <= 'Z')))
                    return 0;
            break;
        case CONS_UTF8:
            if (!canal_utf8_valid(v))
                return 0;
            break;
        case CONS_MIN:
            if (canal_parse_int64(v, &x) != 0 || x < c->a)
                return 0;
            break;
        case CONS_MAX:
            if (canal_parse_int64(v, &x) != 0 || x > c->a)
                return 0;
            break;
        case CONS_RANGE:
            if (canal_parse_int64(v, &x) != 0 || x < c->a || x > c->b)
                return 0;
            break;
        case CONS_LENGTH:
            x = char_count(v);
            if (x < c->a || x > c->b)
                return 0;
            break;
        case CONS_MINLENGTH:
            if (char_count(v) < c->a)
                return 0;
            break;
        case CONS_MAXLENGTH:
            if (char_count(v) > c->a)
                return 0;
            break;
        case CONS_REGEX:
            if (!canal__regex_match(c, v))
                return 0;
            break;
        }
    }
    return 1;
}

/* The last place at or before limit - len where the literal part lit starts in v, or -1. */
static long last_literal(canal_str_t v, size_t limit, const struct tseg *lit, int fold)
{
    for (size_t q = limit - lit->len + 1; q-- > 0;) {
        size_t x = 0;
        while (x < lit->len && (fold ? canal__lower((unsigned char)v.base[q + x]) ==
                                           canal__lower((unsigned char)lit->text[x])
                                     : v.base[q + x] == lit->text[x]))
            x++;
        if (x == lit->len)
            return (long)q;
    }
    return -1;
}

/* Splits v among the parts 0..last of the complex segment s the way ASP.NET Core does, from the
 * right: each literal is taken at its last occurrence that leaves at least one character for
 * the parameter after it, and each parameter gets the (non-empty) text between its literals.
 * The last part, if a literal, must end the value; the first, if a literal, must start it (it
 * is looked for there only). A value holding one of its segment's literals may split
 * otherwise than it was joined ("{a}.{b}" with b = "y.z" reads back a = "x.y", b = "z"), as
 * in ASP.NET Core. */
static int complex_split(const struct tseg *s, size_t last, canal_str_t v, int fold,
                         canal_str_t *vals)
{
    size_t end = v.len;
    long pending = -1, lit = -1; /* a parameter waiting for its value; the literal after it */
    for (size_t k = last + 1; k-- > 0;) {
        const struct tseg *part = &s->parts[k];
        size_t newend = end;
        if (part->kind != SEG_LITERAL) {
            pending = (long)k;
        } else {
            size_t room = pending >= 0; /* a character kept for the pending parameter */
            lit = (long)k;
            if (end < room + part->len)
                return 0;
            /* a leading literal is anchored: taking its last occurrence could leave text
             * before it ("x{a}" and "xyx1": a = "1", "xy" left over) */
            long q = last_literal(v, k == 0 ? part->len : end - room, part, fold);
            if (q < 0 || (k == last && (size_t)q + part->len != v.len))
                return 0;
            newend = (size_t)q;
        }
        if (pending >= 0 && ((lit >= 0 && part->kind == SEG_LITERAL) || k == 0)) {
            size_t from = (lit < 0 || part->kind != SEG_LITERAL) ? 0 : newend + s->parts[lit].len;
            if (end <= from)
                return 0; /* a parameter never takes an empty value */
            vals[pending] = (canal_str_t){v.base + from, end - from};
            pending = lit = -1;
        }
        end = newend;
    }
    return end == 0 || s->parts[0].kind != SEG_LITERAL;
}

int canal__complex_match(const struct tseg *s, canal_str_t v, int fold, canal_str_t *vals)
{
    canal_str_t got[CANAL__MAX_PARTS] = {{NULL, 0}};
    size_t last = s->nparts - 1, used = last;
    if (!complex_split(s, last, v, fold, got)) {
        /* {a}.{b?}: without b and its '.', unless the value ends with that '.' (.{b?} needs b) */
        if (!s->parts[last].optional || last < 2 || (v.len > 0 && v.base[v.len - 1] == '.'))
            return 0;
        used = last - 2;
        for (size_t k = 0; k <= last; k++)
            got[k] = (canal_str_t){NULL, 0};
        if (!complex_split(s, used, v, fold, got))
            return 0;
    }
    for (size_t k = 0; k <= used; k++)
        if (s->parts[k].kind != SEG_LITERAL &&
            !canal__constraints_ok(s->parts[k].cons, s->parts[k].ncons, got[k]))
            return 0;
    if (vals != NULL)
        memcpy(vals, got, (last + 1) * sizeof(*got));
    return 1;
}
