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
                            size_t alen, int has_arg, size_t pos, canal_error_info_t *err)
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
        char *re_text = strndup(arg, alen);
        if (re_text == NULL || (c->re = malloc(sizeof(*c->re))) == NULL) {
            free(re_text);
            return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
        }
        int rc = regcomp(c->re, re_text, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[100];
            regerror(rc, c->re, msg, sizeof(msg));
            free(re_text);
            free(c->re);
            c->re = NULL;
            /* regcomp reports running out of memory as an error code too: that is not the
             * regex's fault, and callers tell the two apart by code */
            if (rc == REG_ESPACE)
                return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
            return canal__error(err, CANAL_EINVAL, pos, "bad regex: %s", msg);
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

static void free_constraints(struct constraint *cons, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (cons[i].re != NULL) {
            regfree(cons[i].re);
            free(cons[i].re);
        }
        free(cons[i].re_text);
    }
    free(cons);
}

void canal__route_free_segments(struct canal_route *route)
{
    for (size_t i = 0; i < route->nsegs; i++) {
        free(route->segs[i].text);
        free_constraints(route->segs[i].cons, route->segs[i].ncons);
    }
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
                       size_t pos, canal_error_info_t *err)
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
    for (size_t k = 0; k < route->nparams; k++)
        if (strlen(route->params[k].name) == i - name_start &&
            memcmp(route->params[k].name, t + name_start, i - name_start) == 0)
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
                                   pos + 1 + cpos, err)) != 0)
            goto out;
        seg->ncons++;
        /* the node key: constraint names folded, arguments as written */
        char lname[16];
        size_t ln = k - cpos < sizeof(lname) ? k - cpos : sizeof(lname) - 1;
        for (size_t x = 0; x < ln; x++)
            lname[x] = (char)canal__lower((unsigned char)t[cpos + x]);
        if ((sig.len && (rc = sbuf_put(&sig, ":", 1)) != 0) || (rc = sbuf_put(&sig, lname, ln)) != 0 ||
            (has_arg && ((rc = sbuf_put(&sig, "(", 1)) != 0 || (rc = sbuf_put(&sig, arg, alen)) != 0 ||
                         (rc = sbuf_put(&sig, ")", 1)) != 0))) {
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

int canal__template_parse(struct canal_route *route, const char *tmpl, int strict_slash,
                          canal_error_info_t *err)
{
    size_t n = strlen(tmpl), i = 0, cap = 0;
    int rc = 0;
    struct sbuf text = {0};

    if (n > 0 && tmpl[0] == '/')
        i = 1;
    if (i == n)
        return 0; /* the root: no segments */
    for (;;) {
        /* one segment, starting at i */
        if (route->nsegs == CANAL_ROUTER_MAX_SEGMENTS) {
            rc = canal__error(err, CANAL_ELIMIT, i, "more than %d segments",
                              CANAL_ROUTER_MAX_SEGMENTS);
            goto fail;
        }
        if (route->nsegs == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            struct tseg *grown = realloc(route->segs, ncap * sizeof(*grown));
            if (grown == NULL) {
                rc = canal__error(err, CANAL_ENOMEM, i, "out of memory");
                goto fail;
            }
            route->segs = grown;
            cap = ncap;
        }
        struct tseg *seg = &route->segs[route->nsegs];
        memset(seg, 0, sizeof(*seg));
        seg->pos = i;
        text.len = 0;
        size_t seg_start = i;
        if (i < n && tmpl[i] == '{' && !(i + 1 < n && tmpl[i + 1] == '{')) {
            /* a parameter: read its text up to the single '}', unescaping doubled braces */
            size_t j = i + 1;
            for (;;) {
                if (j == n) {
                    rc = canal__error(err, CANAL_ESYNTAX, i, "'{' without '}'");
                    goto fail;
                }
                if (tmpl[j] == '}' && j + 1 < n && tmpl[j + 1] == '}') {
                    if ((rc = sbuf_put(&text, "}", 1)) != 0)
                        goto oom;
                    j += 2;
                } else if (tmpl[j] == '}') {
                    break;
                } else if (tmpl[j] == '{') {
                    if (j + 1 < n && tmpl[j + 1] == '{') {
                        if ((rc = sbuf_put(&text, "{", 1)) != 0)
                            goto oom;
                        j += 2;
                    } else {
                        rc = canal__error(err, CANAL_ESYNTAX, j, "unexpected '{' in a parameter");
                        goto fail;
                    }
                } else {
                    if ((rc = sbuf_put(&text, tmpl + j, 1)) != 0)
                        goto oom;
                    j++;
                }
            }
            route->nsegs++; /* freed with the route from here on */
            if ((rc = parse_param(route, seg, text.p ? text.p : "", text.len, seg_start, err)) != 0)
                goto fail;
            i = j + 1;
            if (i < n && tmpl[i] != '/') {
                rc = canal__error(err, CANAL_ESYNTAX, i,
                                  "a parameter must be a whole segment");
                goto fail;
            }
        } else {
            while (i < n && tmpl[i] != '/') {
                char c = tmpl[i];
                if ((c == '{' || c == '}') && i + 1 < n && tmpl[i + 1] == c) {
                    i++;
                } else if (c == '{') {
                    rc = canal__error(err, CANAL_ESYNTAX, i, "a parameter must be a whole segment");
                    goto fail;
                } else if (c == '}') {
                    rc = canal__error(err, CANAL_ESYNTAX, i, "'}' without '{'");
                    goto fail;
                } else if (c == '?') {
                    rc = canal__error(err, CANAL_ESYNTAX, i, "'?' is not allowed in a template");
                    goto fail;
                }
                if ((rc = sbuf_put(&text, &c, 1)) != 0)
                    goto oom;
                i++;
            }
            if ((rc = sbuf_put(&text, "", 0)) != 0)
                goto oom;
            seg->kind = SEG_LITERAL;
            seg->text = text.p;
            seg->len = text.len;
            text = (struct sbuf){0};
            route->nsegs++;
        }
        if (i == n)
            break;
        i++; /* the '/' */
        if (i == n && !strict_slash)
            break; /* a trailing '/' means nothing unless the policy is strict */
        if (i == n) {
            /* strict: the trailing '/' makes an empty last literal segment */
            continue;
        }
    }
    free(text.p);

    /* Which trailing segments may be left out, and are the optional ones all among them? */
    route->first_omittable = route->nsegs;
    while (route->first_omittable > 0) {
        const struct tseg *s = &route->segs[route->first_omittable - 1];
        if (s->kind == SEG_LITERAL)
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
oom:
    rc = canal__error(err, CANAL_ENOMEM, i, "out of memory");
fail:
    free(text.p);
    return rc;
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
        case CONS_REGEX: {
            /* REG_STARTEND: the value is not NUL-terminated. Decoded values hold no NUL. */
            regmatch_t pm[1] = {{0, (regoff_t)v.len}};
            if (regexec(c->re, v.base ? v.base : "", 1, pm, REG_STARTEND) != 0)
                return 0;
            break;
        }
        }
    }
    return 1;
}
