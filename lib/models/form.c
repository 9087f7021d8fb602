/* SPDX-License-Identifier: MIT */
/*
 * HTML forms (canal/form.h): the urlencoded pair iterator, the multipart/form-data reader and
 * the request's form getters.
 *
 * The urlencoded iterator decodes each pair with the router's canal_percent_decode() (the
 * query's decoder) at the pair's own offset in the caller's buffer, so one buffer of the
 * body's size holds every pair at once.
 *
 * The multipart reader walks the body once, part by part: the next delimiter (CRLF "--"
 * boundary, then padding and CRLF or "--") is found with memmem(), so a part's bytes are never
 * looked at one by one; only its header section is, and that is bounded
 * (CANAL_MULTIPART_MAX_HEADER). Every slice it hands out points into the body. Its errors
 * are sticky: the first one is kept in the reader, with a static text and the body offset.
 */
#include <string.h>
#include <strings.h>
#include "models/models.h"

_Static_assert(CANAL_MULTIPART_MAX_PARTS == 128 && CANAL_MULTIPART_MAX_HEADER == 8192,
               "the limits are written in the error texts below");

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* ---- application/x-www-form-urlencoded ---- */

int canal_form_next(canal_str_t body, size_t *at, char *buf, canal_param_t *out, canal_error_info_t *err)
{
    size_t i = *at;
    while (i < body.len && body.base[i] == '&')
        i++;
    if (i >= body.len) {
        *at = i;
        return 0;
    }
    const char *piece = body.base + i, *amp = memchr(piece, '&', body.len - i);
    size_t n = amp ? (size_t)(amp - piece) : body.len - i;
    if (n > INT32_MAX) /* canal_percent_decode() answers in an int */
        return canal_error_set(err, CANAL_EBADREQ, i, "a form field longer than 2 GiB");
    const char *eq = memchr(piece, '=', n);
    size_t klen = eq ? (size_t)(eq - piece) : n;
    char *name = buf + i, *value = eq ? name + klen + 1 : NULL;
    int kd = canal_percent_decode((canal_str_t){piece, klen}, name, 1);
    int vd = eq ? canal_percent_decode((canal_str_t){eq + 1, n - klen - 1}, value, 1) : 0;
    if (kd < 0 || vd < 0)
        return canal_error_set(err, CANAL_EBADREQ, i,
                               "a bad percent-escape (or %%00) in the form field at byte %zu", i);
    out->name = (canal_str_t){name, (size_t)kd};
    out->value = eq ? (canal_str_t){value, (size_t)vd} : (canal_str_t){"", 0};
    *at = i + n;
    return 1;
}

/* ---- parameters (Content-Type, Content-Disposition) ---- */

/* Whether s begins with the media or disposition type t (ASCII case-insensitive), followed by
 * its end, white space or ';'. */
static int type_is(canal_str_t s, const char *t)
{
    size_t n = strlen(t);
    return s.base != NULL && s.len >= n && strncasecmp(s.base, t, n) == 0 &&
           (s.len == n || is_ows(s.base[n]) || s.base[n] == ';');
}

/* The next parameter (";" OWS name "=" value) of s from *at: the value is a quoted string
 * (ending at the next DQUOTE; no quoted-pairs) or a run of bytes up to white space or ';'.
 * 1 with *name and *value, 0 at the end, -1 when malformed (*at then points at the fault). */
static int next_param(canal_str_t s, size_t *at, canal_str_t *name, canal_str_t *value)
{
    size_t i = *at;
    while (i < s.len && is_ows(s.base[i]))
        i++;
    if (i == s.len)
        return 0;
    if (s.base[i] != ';')
        goto bad;
    for (i++; i < s.len && is_ows(s.base[i]); i++)
        ;
    if (i == s.len)
        return 0; /* a ';' at the end */
    size_t n0 = i;
    while (i < s.len && canal__is_tchar((unsigned char)s.base[i]))
        i++;
    if (i == n0 || i == s.len || s.base[i] != '=')
        goto bad;
    *name = (canal_str_t){s.base + n0, i - n0};
    i++;
    if (i < s.len && s.base[i] == '"') {
        const char *q = memchr(s.base + i + 1, '"', s.len - i - 1);
        if (q == NULL)
            goto bad;
        *value = (canal_str_t){s.base + i + 1, (size_t)(q - s.base) - i - 1};
        i = (size_t)(q - s.base) + 1;
    } else {
        size_t v0 = i;
        while (i < s.len && !is_ows(s.base[i]) && s.base[i] != ';' && s.base[i] != '"')
            i++;
        if (i == v0)
            goto bad;
        *value = (canal_str_t){s.base + v0, i - v0};
    }
    *at = i;
    return 1;
bad:
    *at = i;
    return -1;
}

static int is_named(canal_str_t s, const char *name)
{
    size_t n = strlen(name);
    return s.len == n && strncasecmp(s.base, name, n) == 0;
}

/* RFC 2046 5.1.1 bchars */
static int is_bchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'))
        return 1;
    return c != 0 && strchr("'()+_,-./:=? ", c) != NULL;
}

/* The boundary of a multipart/form-data Content-Type: 0, or the error with *why and *where. */
static int find_boundary(canal_str_t ct, canal_str_t *boundary, const char **why, size_t *where)
{
    static const char mt[] = "multipart/form-data";
    canal_str_t name, value, b = {NULL, 0};
    size_t at = sizeof(mt) - 1;
    int rc;
    *where = 0;
    if (!type_is(ct, mt)) {
        *why = "the content type is not multipart/form-data";
        return CANAL_ETYPE;
    }
    while ((rc = next_param(ct, &at, &name, &value)) == 1) {
        if (!is_named(name, "boundary"))
            continue;
        if (b.base != NULL) {
            *why = "two boundary parameters in the content type";
            return CANAL_EBADREQ;
        }
        b = value;
    }
    *where = at;
    if (rc < 0) {
        *why = "malformed parameters in the content type";
        return CANAL_EBADREQ;
    }
    if (b.base == NULL) {
        *why = "multipart/form-data without a boundary parameter";
        return CANAL_EBADREQ;
    }
    if (b.len == 0 || b.len > 70 || b.base[b.len - 1] == ' ') {
        *why = "the boundary is not 1 to 70 characters not ending in a space";
        return CANAL_EBADREQ;
    }
    for (size_t i = 0; i < b.len; i++) {
        if (!is_bchar((unsigned char)b.base[i])) {
            *why = "a character RFC 2046 does not allow in the boundary";
            return CANAL_EBADREQ;
        }
    }
    *boundary = b;
    return 0;
}

int canal_multipart_boundary(canal_str_t content_type, canal_str_t *boundary, canal_error_info_t *err)
{
    const char *why;
    size_t where;
    int rc = find_boundary(content_type, boundary, &why, &where);
    return rc == 0 ? 0 : canal_error_set(err, rc, where, "%s", why);
}

/* ---- multipart/form-data ---- */

/* Records the reader's error (kept: later calls return it again) and returns it. */
static int mp_fail(canal_multipart_t *mp, int code, size_t where, const char *why, canal_error_info_t *err)
{
    mp->_state = code;
    mp->_why = why;
    mp->_where = where;
    return canal_error_set(err, code, where, "%s", why);
}

int canal_multipart_init(canal_multipart_t *mp, canal_str_t content_type, canal_str_t body, canal_error_info_t *err)
{
    canal_str_t b;
    const char *why;
    size_t where;
    *mp = (canal_multipart_t){._body = body};
    int rc = find_boundary(content_type, &b, &why, &where);
    if (rc != 0)
        return mp_fail(mp, rc, where, why, err);
    memcpy(mp->_delim, "\r\n--", 4);
    memcpy(mp->_delim + 4, b.base, b.len);
    mp->_dlen = 4 + b.len;
    return 0;
}

/* What follows delimiter text that ends at a: 1 a closing delimiter ("--"), 2 a delimiter
 * line (padding, CRLF; *next is the byte after it), 0 neither (the text is data). */
static int delimiter_kind(canal_str_t body, size_t a, size_t *next)
{
    if (body.len - a >= 2 && body.base[a] == '-' && body.base[a + 1] == '-')
        return 1;
    while (a < body.len && is_ows(body.base[a]))
        a++;
    if (body.len - a >= 2 && body.base[a] == '\r' && body.base[a + 1] == '\n') {
        *next = a + 2;
        return 2;
    }
    return 0;
}

/* The first delimiter at or after from: its kind (delimiter_kind()) with *d its offset, or 0. */
static int find_delimiter(const canal_multipart_t *mp, size_t from, size_t *d, size_t *next)
{
    canal_str_t body = mp->_body;
    while (from < body.len) {
        const char *hit = memmem(body.base + from, body.len - from, mp->_delim, mp->_dlen);
        if (hit == NULL)
            return 0;
        *d = (size_t)(hit - body.base);
        int kind = delimiter_kind(body, *d + mp->_dlen, next);
        if (kind != 0)
            return kind;
        from = *d + 1;
    }
    return 0;
}

/* The parameters of a Content-Disposition value into p. 0, or the error with *why. */
static int disposition(canal_str_t v, canal_part_t *p, const char **why)
{
    canal_str_t name, value;
    size_t at = 9;
    int rc, have_name = 0;
    if (!type_is(v, "form-data")) {
        *why = "a part's Content-Disposition is not form-data";
        return CANAL_EBADREQ;
    }
    while ((rc = next_param(v, &at, &name, &value)) == 1) {
        canal_str_t *slot = is_named(name, "name") ? &p->name : is_named(name, "filename") ? &p->filename : NULL;
        if (slot == NULL)
            continue; /* filename* too: RFC 7578 4.2 says it must not be used */
        if (slot->base != NULL) {
            *why = "a part's Content-Disposition has a parameter twice";
            return CANAL_EBADREQ;
        }
        *slot = value;
        have_name |= slot == &p->name;
    }
    if (rc < 0) {
        *why = "malformed parameters in a part's Content-Disposition";
        return CANAL_EBADREQ;
    }
    if (!have_name) {
        *why = "a part's Content-Disposition has no name";
        return CANAL_EBADREQ;
    }
    return 0;
}

/* Reads the header section of the part [start, end) into p and sets p->data. 0, or the
 * error with *why and *where. */
static int part_head(canal_str_t body, size_t start, size_t end, canal_part_t *p, const char **why, size_t *where)
{
    const char *s = body.base + start;
    size_t n = end - start, lines = 0; /* the header lines' bytes, each with its CRLF */
    int have_cd = 0, have_ct = 0;
    *where = start;
    *p = (canal_part_t){.content_type = {"text/plain", 10}};
    if (!(n >= 2 && s[0] == '\r' && s[1] == '\n')) {
        /* the blank line, within the limit: lines + CRLF <= MAX + 2 */
        size_t window = n < CANAL_MULTIPART_MAX_HEADER + 2 ? n : CANAL_MULTIPART_MAX_HEADER + 2;
        const char *blank = memmem(s, window, "\r\n\r\n", 4);
        if (blank == NULL && n > window) {
            *why = "a part's header section is larger than 8192 bytes";
            return CANAL_ELIMIT;
        }
        if (blank == NULL) {
            *why = "a part's header runs into the next delimiter (no blank line ends it)";
            return CANAL_EBADREQ;
        }
        lines = (size_t)(blank - s) + 2;
    }
    for (size_t i = 0; i < lines;) {
        const char *line = s + i, *colon = NULL;
        size_t len = 0;
        *where = start + i;
        for (; !(line[len] == '\r' && line[len + 1] == '\n'); len++) {
            unsigned char c = (unsigned char)line[len];
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                *where = start + i + len;
                *why = "a control byte (a bare CR or LF, NUL) in a part's header";
                return CANAL_EBADREQ;
            }
            if (c == ':' && colon == NULL)
                colon = line + len;
        }
        i += len + 2;
        if (is_ows(line[0])) {
            *why = "a folded header line in a part";
            return CANAL_EBADREQ;
        }
        if (colon == NULL || colon == line) {
            *why = "a part's header line without a name and ':'";
            return CANAL_EBADREQ;
        }
        canal_str_t name = {line, (size_t)(colon - line)}, value = {colon + 1, len - name.len - 1};
        for (size_t k = 0; k < name.len; k++) {
            if (!canal__is_tchar((unsigned char)name.base[k])) {
                *why = "a bad header name in a part";
                return CANAL_EBADREQ;
            }
        }
        while (value.len > 0 && is_ows(value.base[0]))
            value.base++, value.len--;
        while (value.len > 0 && is_ows(value.base[value.len - 1]))
            value.len--;
        if (is_named(name, "content-disposition")) {
            int rc = have_cd++ ? (*why = "a part with two Content-Disposition fields", CANAL_EBADREQ)
                               : disposition(value, p, why);
            if (rc != 0)
                return rc;
        } else if (is_named(name, "content-type")) {
            if (have_ct++ || value.len == 0) {
                *why = "a part with two Content-Type fields, or an empty one";
                return CANAL_EBADREQ;
            }
            p->content_type = value;
        }
    }
    if (!have_cd) {
        *where = start;
        *why = "a part without Content-Disposition";
        return CANAL_EBADREQ;
    }
    size_t data = start + lines + 2;
    p->data = (canal_str_t){body.base + data, end - data};
    return 0;
}

int canal_multipart_next(canal_multipart_t *mp, canal_part_t *part, canal_error_info_t *err)
{
    canal_str_t body = mp->_body;
    size_t d, next = 0;
    int kind;
    if (mp->_state < 0)
        return canal_error_set(err, mp->_state, mp->_where, "%s", mp->_why);
    if (mp->_state == 2)
        return 0;
    if (mp->_state == 0) {
        /* the first delimiter: at the very start (without its CRLF), or after a preamble */
        size_t dash = mp->_dlen - 2;
        if (body.len >= dash && memcmp(body.base, mp->_delim + 2, dash) == 0 &&
            (kind = delimiter_kind(body, dash, &next)) != 0)
            d = 0;
        else if ((kind = find_delimiter(mp, 0, &d, &next)) == 0)
            return mp_fail(mp, CANAL_EBADREQ, 0, "no multipart delimiter line (\"--\" boundary, then CRLF)", err);
        if (kind == 1) { /* a closing delimiter first: no parts */
            mp->_state = 2;
            return 0;
        }
        mp->_state = 1;
        mp->_at = next;
    }
    size_t start = mp->_at;
    if ((kind = find_delimiter(mp, start, &d, &next)) == 0)
        return mp_fail(mp, CANAL_EBADREQ, start, "a multipart body without its closing delimiter", err);
    if (++mp->_nparts > CANAL_MULTIPART_MAX_PARTS)
        return mp_fail(mp, CANAL_ELIMIT, start, "a multipart body of more than 128 parts", err);
    const char *why;
    size_t where;
    int rc = part_head(body, start, d, part, &why, &where);
    if (rc != 0)
        return mp_fail(mp, rc, where, why, err);
    if (kind == 1)
        mp->_state = 2; /* the epilogue after it is ignored */
    else
        mp->_at = next;
    return 1;
}

/* ---- the request's form ---- */

static void parse_form(canal_req_t *req)
{
    canal_str_t body = canal_req_body(req), ct = canal_req_header(req, "content-type");
    canal_error_info_t e = {0};
    int rc = 0, count = 0;
    req->form_parsed = 1;
    if (body.len == 0) {
        req->form_rc = 0;
        return;
    }
    if (type_is(ct, "application/x-www-form-urlencoded")) {
        size_t n = 1;
        for (const char *p = body.base, *end = body.base + body.len; (p = memchr(p, '&', (size_t)(end - p))) != NULL; p++)
            n++;
        req->form = canal_req_alloc(req, n * sizeof(*req->form));
        char *buf = canal_req_alloc(req, body.len);
        size_t at = 0;
        while ((rc = canal_form_next(body, &at, buf, &req->form[count], &e)) == 1) {
            if (count++ == INT32_MAX - 1) { /* the count is an int: a body of 4 GiB of "a&" */
                rc = canal_error_set(&e, CANAL_ELIMIT, at, "more than %d form fields", INT32_MAX - 1);
                break;
            }
        }
    } else {
        canal_multipart_t mp;
        canal_part_t part;
        if ((rc = canal_multipart_init(&mp, ct, body, &e)) == CANAL_ETYPE)
            canal_error_set(&e, rc, 0, "the content type is not application/x-www-form-urlencoded or multipart/form-data");
        if (rc == 0)
            req->form = canal_req_alloc(req, CANAL_MULTIPART_MAX_PARTS * sizeof(*req->form));
        while (rc == 0 && (rc = canal_multipart_next(&mp, &part, &e)) == 1) {
            if (!CANAL_PART_IS_FILE(&part))
                req->form[count++] = (canal_param_t){part.name, part.data};
            rc = 0;
        }
    }
    if (rc < 0) {
        req->form_err = canal_req_alloc(req, sizeof(e));
        *req->form_err = e;
        req->form_rc = rc;
    } else {
        req->form_rc = count;
    }
}

int canal_req_form_all(canal_req_t *req, const canal_param_t **params, canal_error_info_t *err)
{
    if (!req->form_parsed)
        parse_form(req);
    if (req->form_rc < 0) {
        if (err != NULL)
            *err = *req->form_err;
        return req->form_rc;
    }
    *params = req->form;
    return req->form_rc;
}

int canal_req_form(canal_req_t *req, const char *name, canal_str_t *value)
{
    const canal_param_t *f;
    int n = canal_req_form_all(req, &f, NULL), count = 0;
    size_t len = strlen(name);
    for (int i = 0; i < n; i++) {
        if (f[i].name.len == len && memcmp(f[i].name.base, name, len) == 0 && count++ == 0 && value != NULL)
            *value = f[i].value;
    }
    return n < 0 ? n : count;
}
