/* SPDX-License-Identifier: MIT */
/*
 * Cookies (canal/cookie.h): the Cookie field parser, the request's cookie getter, and the
 * Set-Cookie writer. The parser is one function, canal_cookie_next(), that every reader uses;
 * it allocates nothing and hands out slices of the field. The writer checks every part it is
 * given against RFC 6265's grammar before writing a byte, so a value can never carry a ';'
 * or a CR into the header.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "models/models.h"
#include "canal/cookie.h"

int canal__is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'))
        return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* RFC 6265 4.1.1 cookie-octet: US-ASCII but controls, space, DQUOTE, ',', ';' and '\' */
static int is_cookie_octet(unsigned char c)
{
    return c >= 0x21 && c <= 0x7e && c != '"' && c != ',' && c != ';' && c != '\\';
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* 1 if s (n bytes) is a well-formed cookie-value; *inner is the value without its quotes */
static int cookie_value(const char *s, size_t n, canal_str_t *inner)
{
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
        s++, n -= 2;
    for (size_t i = 0; i < n; i++)
        if (!is_cookie_octet((unsigned char)s[i]))
            return 0;
    *inner = (canal_str_t){s, n};
    return 1;
}

int canal_cookie_next(canal_str_t field, size_t *at, canal_cookie_t *out, size_t *malformed)
{
    size_t i = *at;
    while (i < field.len) {
        while (i < field.len && (is_ows(field.base[i]) || field.base[i] == ';'))
            i++;
        if (i == field.len)
            break;
        const char *pair = field.base + i;
        const char *semi = memchr(pair, ';', field.len - i);
        size_t n = semi ? (size_t)(semi - pair) : field.len - i;
        i += n;
        while (n > 0 && is_ows(pair[n - 1]))
            n--;
        const char *eq = memchr(pair, '=', n);
        size_t k = eq ? (size_t)(eq - pair) : 0;
        int ok = eq != NULL && k > 0;
        for (size_t j = 0; ok && j < k; j++)
            ok = canal__is_tchar((unsigned char)pair[j]);
        canal_str_t value;
        if (ok && cookie_value(eq + 1, n - k - 1, &value)) {
            out->name = (canal_str_t){pair, k};
            out->value = value;
            *at = i;
            return 1;
        }
        if (malformed != NULL)
            (*malformed)++;
    }
    *at = field.len;
    return 0;
}

/* Calls fn on each well-formed cookie called name in the request's Cookie fields, in order,
 * until it returns non-zero; returns that, or 0. */
static int cookie_each(const canal_req_t *req, const char *name, int (*fn)(canal_str_t value, void *data),
                       void *data)
{
    const h2o_headers_t *hs = &req->h2o->headers;
    size_t n = strlen(name);
    for (ssize_t k = -1; (k = h2o_find_header(hs, H2O_TOKEN_COOKIE, k)) != -1;) {
        canal_str_t field = {hs->entries[k].value.base, hs->entries[k].value.len};
        canal_cookie_t c;
        size_t at = 0;
        while (canal_cookie_next(field, &at, &c, NULL)) {
            int rc;
            if (c.name.len == n && memcmp(c.name.base, name, n) == 0 && (rc = fn(c.value, data)) != 0)
                return rc;
        }
    }
    return 0;
}

static int take_first(canal_str_t value, void *data)
{
    *(canal_str_t *)data = value;
    return 1;
}

int canal_req_cookie(const canal_req_t *req, const char *name, canal_str_t *value)
{
    canal_str_t v;
    if (cookie_each(req, name, take_first, &v) == 0)
        return CANAL_ENOTFOUND;
    *value = v;
    return 0;
}

/* canal_req_cookie_signed(): the first value that verifies */
struct verify_ctx {
    const canal_req_t *req;
    const canal_signer_t *signer;
    const char *name;
    canal_str_t content;
};

static int take_verified(canal_str_t value, void *data)
{
    struct verify_ctx *v = data;
    char *out = canal_req_alloc((canal_req_t *)v->req, value.len + 1);
    int n = canal_signer_verify(v->signer, v->name, value, out, value.len + 1);
    if (n < 0)
        return 0;
    v->content = (canal_str_t){out, (size_t)n};
    return 1;
}

int canal_req_cookie_signed(const canal_req_t *req, const canal_signer_t *s, const char *name, canal_str_t *content)
{
    struct verify_ctx v = {req, s, name, {NULL, 0}};
    if (cookie_each(req, name, take_verified, &v) == 0)
        return CANAL_ENOTFOUND;
    *content = v.content;
    return 0;
}

/* ---- Set-Cookie ---- */

/* A path or domain attribute value: printable ASCII without ';' (RFC 6265 4.1.1 av-octet) */
static int attr_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == ';')
            return 0;
    return 1;
}

/* canal_cookie_format(); deleting: an empty value, Max-Age=0 and an Expires in 1970 */
static int format_cookie(char *buf, size_t size, const char *name, canal_str_t value,
                         const canal_cookie_options_t *opts, int deleting, canal_error_info_t *err)
{
    static const canal_cookie_options_t defaults = {0};
    const canal_cookie_options_t *o = opts != NULL ? opts : &defaults;
    size_t n = name != NULL ? strlen(name) : 0;
    if (n == 0)
        return canal_error_set(err, CANAL_EINVAL, 0, "a cookie needs a name");
    for (size_t i = 0; i < n; i++)
        if (!canal__is_tchar((unsigned char)name[i]))
            return canal_error_set(err, CANAL_EINVAL, i, "the cookie name is not a token (byte %zu)", i);
    for (size_t i = 0; i < value.len; i++)
        if (!is_cookie_octet((unsigned char)value.base[i]))
            return canal_error_set(err, CANAL_EINVAL, i,
                                   "the value of cookie %s has a byte that is not a cookie-octet at %zu", name, i);
    const char *path = o->path != NULL ? o->path : "/";
    if (*path == '\0' || !attr_ok(path))
        return canal_error_set(err, CANAL_EINVAL, 0, "cookie %s: a bad Path", name);
    if (o->domain != NULL && (*o->domain == '\0' || !attr_ok(o->domain)))
        return canal_error_set(err, CANAL_EINVAL, 0, "cookie %s: a bad Domain", name);
    if (o->max_age < 0 || o->expires < 0)
        return canal_error_set(err, CANAL_EINVAL, 0, "cookie %s: a negative Max-Age or Expires", name);
    if (o->same_site == CANAL_SAME_SITE_NONE && o->not_secure)
        return canal_error_set(err, CANAL_EINVAL, 0, "cookie %s: SameSite=None needs Secure", name);
    char expires[64] = "";
    if (o->expires > 0 || deleting) {
        struct tm tm;
        time_t t = deleting ? 0 : (time_t)o->expires;
        gmtime_r(&t, &tm);
        strftime(expires, sizeof(expires), "; Expires=%a, %d %b %Y %H:%M:%S GMT", &tm);
    }
    char max_age[40] = "";
    if (o->max_age > 0 || deleting)
        snprintf(max_age, sizeof(max_age), "; Max-Age=%lld", deleting ? 0LL : (long long)o->max_age);
    static const char *const same_site[] = {"Lax", "Strict", "None"};
    int len = snprintf(buf, size, "%s=%.*s; Path=%s%s%s%s%s%s%s; SameSite=%s", name, (int)value.len,
                       value.len ? value.base : "", path, o->domain ? "; Domain=" : "", o->domain ? o->domain : "",
                       max_age, expires, o->not_http_only ? "" : "; HttpOnly", o->not_secure ? "" : "; Secure",
                       same_site[o->same_site <= CANAL_SAME_SITE_NONE ? o->same_site : 0]);
    if (len < 0 || (size_t)len >= size)
        return canal_error_set(err, CANAL_ELIMIT, 0, "cookie %s: the Set-Cookie field is over %zu bytes", name, size);
    return len;
}

int canal_cookie_format(char *buf, size_t size, const char *name, canal_str_t value,
                        const canal_cookie_options_t *opts, canal_error_info_t *err)
{
    return format_cookie(buf, size, name, value, opts, 0, err);
}

/* Adds the Set-Cookie field of canal_res_cookie() or canal_res_cookie_delete() */
static int add_cookie(canal_req_t *req, const char *name, canal_str_t value, const canal_cookie_options_t *opts,
                      int deleting, canal_error_info_t *err)
{
    if (req->res.committed)
        return canal_error_set(err, CANAL_ESTATE, 0, "the answer is committed");
    char *buf = canal_req_alloc(req, 4096);
    int len = format_cookie(buf, 4096, name, value, opts, deleting, err);
    if (len < 0)
        return len;
    h2o_add_header(&req->h2o->pool, &req->h2o->res.headers, H2O_TOKEN_SET_COOKIE, NULL, buf, (size_t)len);
    return 0;
}

int canal_res_cookie(canal_req_t *req, const char *name, canal_str_t value, const canal_cookie_options_t *opts,
                     canal_error_info_t *err)
{
    return add_cookie(req, name, value, opts, 0, err);
}

int canal_res_cookie_delete(canal_req_t *req, const char *name, const canal_cookie_options_t *opts,
                            canal_error_info_t *err)
{
    return add_cookie(req, name, (canal_str_t){"", 0}, opts, 1, err);
}
