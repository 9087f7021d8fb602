/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the query string, end to end. The same in-process app as fuzz_binding
 * (fuzz_server.h); each input is the query of "GET /echo/x?<input>", whose handler dumps
 * canal_req_query_all() (names and values hex-encoded) and checks the accessors against each
 * other on the server thread (no NUL byte in a decoded name or value; canal_req_query counts
 * every occurrence of a repeated name and gives the first; canal_req_query_int64 agrees with
 * canal_parse_int64). Bytes the request line cannot carry (controls, space, DEL) are sent
 * percent-encoded; everything else as it is.
 *
 * Here, the answer is compared with an independent reading of the query as sent, in the
 * order canal checks (with the app's limits, fuzz_server.h):
 *   - a target longer than max_target_length: 414;
 *   - a bad escape ('%' not followed by two hex digits) or %00 anywhere: 400;
 *   - more non-empty '&'-separated pieces than max_query_params: 414;
 *     (each as problem details with its reason)
 *   - otherwise 200: canal_req_path is "/echo/x", canal_req_query_string the query exactly as
 *     sent, and the parameters are exactly the non-empty pieces, in order, split at their
 *     first '=' (none: an empty value), percent-decoded with '+' as a space; so repeated names
 *     are all there.
 *
 * LeakSanitizer: as fuzz_binding (on, with libh2o's per-thread free lists suppressed).
 * Build and run: test/fuzz/build.sh (see there).
 */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_start();
    return 0;
}

static int hexdigit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 1 when every '%' starts an escape of two hex digits that is not %00 */
static int escapes_ok(const char *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (q[i] != '%')
            continue;
        if (i + 2 >= n)
            return 0;
        int hi = hexdigit((unsigned char)q[i + 1]), lo = hexdigit((unsigned char)q[i + 2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
            return 0;
        i += 2;
    }
    return 1;
}

/* the reference decoding of one name or value, as lower-case hex */
static void decode_hex(struct fz_buf *out, const char *s, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            c = (unsigned char)(hexdigit((unsigned char)s[i + 1]) << 4 | hexdigit((unsigned char)s[i + 2]));
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        char h[2] = {hx[c >> 4], hx[c & 15]};
        fz_put(out, h, 2);
    }
    if (out->p == NULL)
        fz_put(out, "", 0);
}

static void fail_with(const char *what, const char *req, const struct fz_reply *r)
{
    fprintf(stderr, "invariant failed: %s\n--- request\n%s\n--- answer (%zu bytes)\n%.*s\n", what, req, r->raw_len,
            (int)(r->raw_len > 3000 ? 3000 : r->raw_len), r->raw ? r->raw : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long iterations;
    if (size > 8192)
        return 0;
    if (++iterations % 64 == 0)
        fz_health_check();

    struct fz_buf req = {0};
    fz_puts(&req, "GET /echo/x?");
    size_t qstart = req.len;
    fz_put_target(&req, data, size);
    size_t qlen = req.len - qstart;
    char *q = strndup(req.p + qstart, qlen); /* the query as sent */
    fz_check(q != NULL, "strndup");
    fz_puts(&req, " HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n");

    struct fz_reply r;
    if (fz_request(req.p, req.len, 0, &r) != 0 || !r.complete)
        fail_with("a complete answer", req.p, &r);
    const canal_config_t *cfg = canal_app_config(fz_app);
    size_t pieces = 0;
    for (size_t i = 0; i < qlen; i++)
        pieces += q[i] != '&' && (i == 0 || q[i - 1] == '&');
    if (qlen + 8 > cfg->max_target_length) { /* "/echo/x?" and the query */
        if (r.status != 414 || strncmp(r.ctype, "application/problem+json", 24) != 0 ||
            memmem(r.body, r.body_len, "the request target is longer than", 33) == NULL)
            fail_with("a target over max_target_length is a 414", req.p, &r);
        goto out;
    }
    if (!escapes_ok(q, qlen)) {
        size_t n;
        if (r.status != 400 || strncmp(r.ctype, "application/problem+json", 24) != 0 ||
            memmem(r.body, r.body_len, "malformed percent-encoding in the query", 39) == NULL ||
            fz_header(&r, "content-length", &n) == NULL)
            fail_with("a bad escape or %00 in the query is a 400", req.p, &r);
        goto out;
    }
    if (pieces > cfg->max_query_params) {
        if (r.status != 414 || strncmp(r.ctype, "application/problem+json", 24) != 0 ||
            memmem(r.body, r.body_len, "query parameters", 16) == NULL)
            fail_with("more than max_query_params parameters is a 414", req.p, &r);
        goto out;
    }
    if (r.status != 200 || strncmp(r.ctype, "application/json", 16) != 0)
        fail_with("a good query is a 200 with JSON", req.p, &r);
    json_error_t err;
    json_t *j = json_loadb(r.body, r.body_len, 0, &err);
    json_t *list = json_object_get(j, "query");
    if (j == NULL || !json_is_array(list))
        fail_with("the echo's JSON", req.p, &r);
    json_t *rest = json_array_get(json_object_get(j, "rest"), 0);
    if (!json_is_string(rest) || strcmp(json_string_value(rest), "78") != 0)
        fail_with("the route value is 'x'", req.p, &r);
    /* canal_req_path and canal_req_query_string: the target as sent, split at the first '?' */
    json_t *raw = json_object_get(j, "raw");
    struct fz_buf qh = {0};
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < qlen; i++) {
        char h[2] = {hx[(unsigned char)q[i] >> 4], hx[(unsigned char)q[i] & 15]};
        fz_put(&qh, h, 2);
    }
    if (qh.p == NULL)
        fz_put(&qh, "", 0);
    if (!json_is_array(raw) || !json_is_string(json_array_get(raw, 0)) ||
        strcmp(json_string_value(json_array_get(raw, 0)), "2f6563686f2f78") != 0 ||
        !json_is_string(json_array_get(raw, 1)) || strcmp(json_string_value(json_array_get(raw, 1)), qh.p) != 0)
        fail_with("the raw path is /echo/x and the raw query as sent", req.p, &r);
    free(qh.p);

    /* the reference reading */
    size_t k = 0, at = 0;
    while (at <= qlen) {
        const char *amp = memchr(q + at, '&', qlen - at);
        size_t end = amp ? (size_t)(amp - q) : qlen;
        if (end > at) {
            const char *piece = q + at, *eq = memchr(piece, '=', end - at);
            size_t klen = eq ? (size_t)(eq - piece) : end - at;
            struct fz_buf kh = {0}, vh = {0};
            decode_hex(&kh, piece, klen);
            decode_hex(&vh, eq ? eq + 1 : "", eq ? end - at - klen - 1 : 0);
            json_t *pair = json_array_get(list, k);
            const char *gk = json_string_value(json_array_get(pair, 0));
            const char *gv = json_string_value(json_array_get(pair, 1));
            if (gk == NULL || gv == NULL || strcmp(gk, kh.p) != 0 || strcmp(gv, vh.p) != 0) {
                fprintf(stderr, "parameter %zu: expected %s=%s, got %s=%s\n", k, kh.p, vh.p, gk ? gk : "-",
                        gv ? gv : "-");
                fail_with("the parameters as the reference reads them", req.p, &r);
            }
            free(kh.p);
            free(vh.p);
            k++;
        }
        at = end + 1;
    }
    if (json_array_size(list) != k)
        fail_with("as many parameters as non-empty pieces", req.p, &r);
    json_decref(j);
out:
    fz_reply_free(&r);
    free(q);
    free(req.p);
    return 0;
}
