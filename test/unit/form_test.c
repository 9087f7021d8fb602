/* SPDX-License-Identifier: MIT */
/*
 * Forms (canal/form.h): the urlencoded iterator, the multipart/form-data boundary and parts,
 * every error and limit, and the request's form and a route's max_body through the test
 * client.
 */
#include "test.h"
#include <canal.h>
#include <canal/testing.h>

#define S(lit) ((canal_str_t){lit, sizeof(lit) - 1})

static int str_is(canal_str_t s, const char *want, size_t n)
{
    return s.len == n && memcmp(s.base, want, n) == 0;
}
#define assert_str(s, lit) assert_true(str_is((s), lit, sizeof(lit) - 1))

/* ---- urlencoded ---- */

static void form_pairs(void **state)
{
    static const char text[] = "a=1&b=hello+world&a=%41%62&&c&d=&e%20f=x%2By=z&";
    canal_str_t body = S(text);
    char buf[sizeof(text)];
    canal_param_t p[8];
    size_t at = 0, n = 0;
    int rc;
    while ((rc = canal_form_next(body, &at, buf, &p[n], NULL)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 6);
    assert_str(p[0].name, "a");
    assert_str(p[0].value, "1");
    assert_str(p[1].value, "hello world");
    assert_str(p[2].name, "a"); /* a duplicate, in order */
    assert_str(p[2].value, "Ab");
    assert_str(p[3].name, "c"); /* no '=': an empty value */
    assert_str(p[3].value, "");
    assert_str(p[4].name, "d");
    assert_str(p[4].value, "");
    assert_str(p[5].name, "e f");
    assert_str(p[5].value, "x+y=z"); /* only the first '=' splits */
    assert_int_equal(canal_form_next(body, &at, buf, &p[0], NULL), 0); /* and stays at the end */

    /* in place: buf may be the body's own memory */
    char own[] = "k=%E2%82%AC";
    at = 0;
    assert_int_equal(canal_form_next((canal_str_t){own, sizeof(own) - 1}, &at, own, &p[0], NULL), 1);
    assert_str(p[0].value, "\xe2\x82\xac");

    at = 0;
    assert_int_equal(canal_form_next(S(""), &at, buf, &p[0], NULL), 0);
    at = 0;
    assert_int_equal(canal_form_next(S("&&&"), &at, buf, &p[0], NULL), 0);
}

static void form_errors(void **state)
{
    static const char *const bad[] = {"a=%4", "a=%zz", "a=%00", "%G1=x", "a=%", "x%0=1"};
    char buf[64];
    canal_param_t p;
    canal_error_info_t err;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t at = 0;
        canal_str_t body = {bad[i], strlen(bad[i])};
        assert_int_equal(canal_form_next(body, &at, buf, &p, &err), CANAL_EBADREQ);
        assert_int_equal(err.code, CANAL_EBADREQ);
        assert_non_null(strstr(err.message, "percent-escape"));
        assert_int_equal(at, 0);
    }
    /* the good pairs before a bad one come out; the bad one is an error every time */
    canal_str_t body = S("ok=1&bad=%2");
    size_t at = 0;
    assert_int_equal(canal_form_next(body, &at, buf, &p, &err), 1);
    assert_str(p.value, "1");
    assert_int_equal(canal_form_next(body, &at, buf, &p, &err), CANAL_EBADREQ);
    assert_int_equal(err.position, 5);
    assert_int_equal(canal_form_next(body, &at, buf, &p, NULL), CANAL_EBADREQ);
}

/* ---- multipart: the boundary ---- */

static void multipart_boundary(void **state)
{
    canal_str_t b;
    canal_error_info_t err;
    assert_int_equal(canal_multipart_boundary(S("multipart/form-data; boundary=abc"), &b, NULL), 0);
    assert_str(b, "abc");
    assert_int_equal(canal_multipart_boundary(S("Multipart/Form-Data;charset=utf-8;BOUNDARY=\"a b:c?\""), &b, NULL), 0);
    assert_str(b, "a b:c?");
    assert_int_equal(canal_multipart_boundary(S("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW ;"), &b, NULL), 0);
    assert_str(b, "----WebKitFormBoundary7MA4YWxkTrZu0gW");
    char ct[128];
    snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%070d", 7);
    assert_int_equal(canal_multipart_boundary((canal_str_t){ct, strlen(ct)}, &b, NULL), 0);
    assert_int_equal(b.len, 70);
    snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%071d", 7);
    assert_int_equal(canal_multipart_boundary((canal_str_t){ct, strlen(ct)}, &b, &err), CANAL_EBADREQ);
    assert_non_null(strstr(err.message, "1 to 70"));

    static const struct {
        const char *ct;
        int code;
        const char *why;
    } cases[] = {
        {"text/plain", CANAL_ETYPE, "not multipart/form-data"},
        {"multipart/form-dataX; boundary=a", CANAL_ETYPE, "not multipart"},
        {"multipart/mixed; boundary=a", CANAL_ETYPE, "not multipart"},
        {"", CANAL_ETYPE, "not multipart"},
        {"multipart/form-data", CANAL_EBADREQ, "without a boundary"},
        {"multipart/form-data; charset=utf-8", CANAL_EBADREQ, "without a boundary"},
        {"multipart/form-data; boundary=\"\"", CANAL_EBADREQ, "1 to 70"},
        {"multipart/form-data; boundary=\"ab \"", CANAL_EBADREQ, "1 to 70"},
        {"multipart/form-data; boundary=a@b", CANAL_EBADREQ, "does not allow"},
        {"multipart/form-data; boundary=a\\b", CANAL_EBADREQ, "does not allow"},
        {"multipart/form-data; boundary=a; boundary=b", CANAL_EBADREQ, "two boundary"},
        {"multipart/form-data; boundary", CANAL_EBADREQ, "malformed"},
        {"multipart/form-data; boundary=\"abc", CANAL_EBADREQ, "malformed"},
        {"multipart/form-data; boundary=", CANAL_EBADREQ, "malformed"},
        {"multipart/form-data boundary=a", CANAL_EBADREQ, "malformed"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&err, 0, sizeof(err));
        int rc = canal_multipart_boundary((canal_str_t){cases[i].ct, strlen(cases[i].ct)}, &b, &err);
        if (rc != cases[i].code || strstr(err.message, cases[i].why) == NULL)
            fail_msg("%s: %d (%s), expected %d (%s)", cases[i].ct, rc, err.message, cases[i].code, cases[i].why);
    }
    assert_int_equal(canal_multipart_boundary((canal_str_t){NULL, 0}, &b, NULL), CANAL_ETYPE);
}

/* ---- multipart: parts ---- */

#define CT "multipart/form-data; boundary=XyZ"

static const char good_body[] =
    "This preamble is ignored.\r\n--XyZ\r\n" /* a preamble, then the first delimiter */
    "Content-Disposition: form-data; name=\"title\"\r\n"
    "\r\n"
    "Hello\r\n"
    "--XyZ  \t\r\n" /* transport padding */
    "content-disposition: FORM-DATA; name=title\r\n" /* a duplicate name, token form */
    "X-Other: skipped\r\n"
    "\r\n"
    "\r\n" /* the value: CR LF */
    "\r\n--XyZ\r\n"
    "Content-Disposition: form-data; name=\"empty\"\r\n"
    "\r\n"
    "\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"upload\"; filename=\"a \\b.bin\"; filename*=UTF-8''x\r\n"
    "Content-Type: application/octet-stream\r\n"
    "\r\n"
    "\x00\x01\r\n\r\n--XyZX\r\n--XyZ junk\r\n--Xy\r\n\r\n--XyZ-\n--XyZ\n\xff\x00" /* data that looks like delimiters */
    "\r\n--XyZ\r\n"
    "Content-Disposition: form-data; name=\"nofile\"; filename=\"\"\r\n"
    "Content-Type: application/octet-stream\r\n"
    "\r\n"
    "\r\n--XyZ--  the epilogue\r\n--XyZ\r\nis ignored too";

static const char file_bytes[] = "\x00\x01\r\n\r\n--XyZX\r\n--XyZ junk\r\n--Xy\r\n\r\n--XyZ-\n--XyZ\n\xff\x00";

static void multipart_parts(void **state)
{
    canal_multipart_t mp;
    canal_part_t p[8];
    size_t n = 0;
    int rc;
    assert_int_equal(canal_multipart_init(&mp, S(CT), S(good_body), NULL), 0);
    while ((rc = canal_multipart_next(&mp, &p[n], NULL)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 5);
    assert_str(p[0].name, "title");
    assert_str(p[0].data, "Hello");
    assert_str(p[0].content_type, "text/plain");
    assert_false(CANAL_PART_IS_FILE(&p[0]));
    assert_str(p[1].name, "title");
    assert_str(p[1].data, "\r\n"); /* a value may end in CR LF */
    assert_str(p[2].name, "empty");
    assert_str(p[2].data, "");
    assert_str(p[3].name, "upload");
    assert_true(CANAL_PART_IS_FILE(&p[3]));
    assert_str(p[3].filename, "a \\b.bin"); /* a backslash is a byte; filename* ignored */
    assert_str(p[3].content_type, "application/octet-stream");
    assert_int_equal(p[3].data.len, sizeof(file_bytes) - 1);
    assert_memory_equal(p[3].data.base, file_bytes, sizeof(file_bytes) - 1);
    assert_ptr_equal(p[3].data.base, strstr(good_body + 100, "application/octet-stream") + 28); /* no copy */
    assert_str(p[4].name, "nofile");
    assert_true(CANAL_PART_IS_FILE(&p[4])); /* an empty file input is still a file part */
    assert_int_equal(p[4].filename.len, 0);
    assert_int_equal(p[4].data.len, 0);
    assert_int_equal(canal_multipart_next(&mp, &p[0], NULL), 0); /* stays at the end */

    /* no preamble, a part without Content-Type, the closing delimiter at the very end */
    assert_int_equal(canal_multipart_init(&mp, S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--"), NULL), 0);
    assert_int_equal(canal_multipart_next(&mp, &p[0], NULL), 1);
    assert_str(p[0].data, "v");
    assert_int_equal(canal_multipart_next(&mp, &p[0], NULL), 0);
    /* a body that is only a closing delimiter has no parts */
    assert_int_equal(canal_multipart_init(&mp, S(CT), S("--XyZ--\r\n"), NULL), 0);
    assert_int_equal(canal_multipart_next(&mp, &p[0], NULL), 0);
}

static void multipart_errors(void **state)
{
#define CD "Content-Disposition: form-data; name=a\r\n"
    static const struct {
        const char *body;
        int code;
        const char *why;
    } cases[] = {
        {"", CANAL_EBADREQ, "no multipart delimiter"},
        {"just text", CANAL_EBADREQ, "no multipart delimiter"},
        {"--XyZ\n" CD "\nv\n--XyZ--\n", CANAL_EBADREQ, "no multipart delimiter"}, /* LF only */
        {"--XyZX\r\n" CD "\r\nv\r\n--XyZX--", CANAL_EBADREQ, "no multipart delimiter"},
        {"--XyZ\r\n" CD "\r\nv", CANAL_EBADREQ, "closing delimiter"},
        {"--XyZ\r\n" CD "\r\nv\r\n--XyZ\r\n" CD "\r\nw", CANAL_EBADREQ, "closing delimiter"},
        {"--XyZ\r\n" CD "\r\nv\r\n--XyZ", CANAL_EBADREQ, "closing delimiter"},
        {"--XyZ\r\n" CD "\r\n--XyZ--", CANAL_EBADREQ, "runs into the next delimiter"},
        {"--XyZ\r\n" CD "X: 1\r\n--XyZ\r\n\r\n\r\n--XyZ--", CANAL_EBADREQ, "runs into"},
        {"--XyZ\r\n" CD "X: 1\nY: 2\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "bare CR or LF"},
        {"--XyZ\r\n" CD "X: 1\rY: 2\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "bare CR or LF"},
        {"--XyZ\r\nContent-Disposition: form-data; name=\"a\x01\"\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "control byte"},
        {"--XyZ\r\n" CD " folded\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "folded"},
        {"--XyZ\r\n" CD "no colon\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "without a name and ':'"},
        {"--XyZ\r\n" CD ": x\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "without a name and ':'"},
        {"--XyZ\r\n" CD "Bad Name: x\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "bad header name"},
        {"--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "without Content-Disposition"},
        {"--XyZ\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "without Content-Disposition"},
        {"--XyZ\r\n\r\n--XyZ--", CANAL_EBADREQ, "runs into"},
        {"--XyZ\r\n" CD CD "\r\nv\r\n--XyZ--", CANAL_EBADREQ, "two Content-Disposition"},
        {"--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "not form-data"},
        {"--XyZ\r\nContent-Disposition: form-data\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "has no name"},
        {"--XyZ\r\nContent-Disposition: form-data; filename=f\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "has no name"},
        {"--XyZ\r\nContent-Disposition: form-data; name=a; name=b\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "twice"},
        {"--XyZ\r\nContent-Disposition: form-data; name\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "malformed parameters"},
        {"--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "malformed parameters"},
        {"--XyZ\r\n" CD "Content-Type: a/b\r\nContent-Type: c/d\r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "two Content-Type"},
        {"--XyZ\r\n" CD "Content-Type:  \r\n\r\nv\r\n--XyZ--", CANAL_EBADREQ, "an empty one"},
    };
#undef CD
    canal_multipart_t mp;
    canal_part_t p;
    canal_error_info_t err;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc;
        memset(&err, 0, sizeof(err));
        assert_int_equal(canal_multipart_init(&mp, S(CT), (canal_str_t){cases[i].body, strlen(cases[i].body)}, NULL), 0);
        while ((rc = canal_multipart_next(&mp, &p, &err)) == 1)
            ;
        if (rc != cases[i].code || strstr(err.message, cases[i].why) == NULL)
            fail_msg("case %zu: %d (%s), expected %d (%s)", i, rc, err.message, cases[i].code, cases[i].why);
        /* sticky: the same error again */
        memset(&err, 0, sizeof(err));
        assert_int_equal(canal_multipart_next(&mp, &p, &err), cases[i].code);
        assert_non_null(strstr(err.message, cases[i].why));
    }
    /* a boundary error at init stays */
    assert_int_equal(canal_multipart_init(&mp, S("text/plain"), S("--XyZ--"), NULL), CANAL_ETYPE);
    assert_int_equal(canal_multipart_next(&mp, &p, &err), CANAL_ETYPE);
}

/* n parts of one field each, then the closing delimiter; the caller frees */
static char *many_parts(size_t n, size_t *len)
{
    static const char part[] = "--XyZ\r\nContent-Disposition: form-data; name=f\r\n\r\nv\r\n";
    char *b = malloc(n * (sizeof(part) - 1) + 8);
    size_t at = 0;
    for (size_t i = 0; i < n; i++, at += sizeof(part) - 1)
        memcpy(b + at, part, sizeof(part) - 1);
    memcpy(b + at, "--XyZ--", 7);
    *len = at + 7;
    return b;
}

/* a part whose header section is exactly hbytes bytes (its lines with their CRLFs) */
static char *big_header(size_t hbytes, size_t *len)
{
    static const char cd[] = "Content-Disposition: form-data; name=a\r\n";
    char *b = malloc(hbytes + 64);
    size_t at = 0;
    memcpy(b, "--XyZ\r\n", 7), at = 7;
    memcpy(b + at, cd, sizeof(cd) - 1), at += sizeof(cd) - 1;
    size_t filler = hbytes - (sizeof(cd) - 1); /* "X: " + n bytes + CRLF */
    memcpy(b + at, "X: ", 3), at += 3;
    memset(b + at, 'x', filler - 5), at += filler - 5;
    memcpy(b + at, "\r\n\r\nv\r\n--XyZ--", 14), at += 14;
    *len = at;
    return b;
}

static void multipart_limits(void **state)
{
    canal_multipart_t mp;
    canal_part_t p;
    canal_error_info_t err;
    size_t len, n = 0;
    int rc;
    char *b = many_parts(CANAL_MULTIPART_MAX_PARTS, &len);
    assert_int_equal(canal_multipart_init(&mp, S(CT), (canal_str_t){b, len}, NULL), 0);
    while ((rc = canal_multipart_next(&mp, &p, NULL)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, CANAL_MULTIPART_MAX_PARTS);
    free(b);
    b = many_parts(CANAL_MULTIPART_MAX_PARTS + 1, &len);
    assert_int_equal(canal_multipart_init(&mp, S(CT), (canal_str_t){b, len}, NULL), 0);
    n = 0;
    while ((rc = canal_multipart_next(&mp, &p, &err)) == 1)
        n++;
    assert_int_equal(rc, CANAL_ELIMIT);
    assert_int_equal(n, CANAL_MULTIPART_MAX_PARTS);
    assert_non_null(strstr(err.message, "more than 128 parts"));
    free(b);

    b = big_header(CANAL_MULTIPART_MAX_HEADER, &len);
    assert_int_equal(canal_multipart_init(&mp, S(CT), (canal_str_t){b, len}, NULL), 0);
    assert_int_equal(canal_multipart_next(&mp, &p, NULL), 1);
    assert_str(p.data, "v");
    free(b);
    b = big_header(CANAL_MULTIPART_MAX_HEADER + 1, &len);
    assert_int_equal(canal_multipart_init(&mp, S(CT), (canal_str_t){b, len}, NULL), 0);
    assert_int_equal(canal_multipart_next(&mp, &p, &err), CANAL_ELIMIT);
    assert_non_null(strstr(err.message, "larger than 8192 bytes"));
    assert_int_equal(err.position, 7);
    free(b);
}

/* ---- the request's form, and max_body ---- */

/* POST /form: the form's fields as [[name, value], ...] and canal_req_form("a"): {"n":..,
 * "a":..., "fields":[...]}; a form error is a problem: 413 for a limit, 415 for the type, 400 */
static int h_form(canal_req_t *req, void *data)
{
    const canal_param_t *f;
    canal_error_info_t err;
    int n = canal_req_form_all(req, &f, &err);
    if (n < 0)
        return canal_res_problem(req, n == CANAL_ELIMIT ? 413 : n == CANAL_ETYPE ? 415 : 400, "%s", err.message);
    json_t *fields = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(fields, json_pack("[s#s#]", f[i].name.base, f[i].name.len, f[i].value.base, f[i].value.len));
    canal_str_t a = {"", 0};
    int na = canal_req_form(req, "a", &a);
    return canal_res_json_new(req, 200, json_pack("{s:i,s:s#,s:o}", "n", na, "a", a.base, a.len, "fields", fields));
}

static canal_test_response_t *post(canal_test_t *t, const char *target, const char *ct, const char *body, size_t len)
{
    canal_kv_t h[] = {{"Content-Type", ct}};
    return canal_test_request(t, "POST", target, h, ct ? 1 : 0, body, len);
}

static void request_form(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    cfg.max_body_size = 4096;
    canal_app_t *app = canal_app_create(&cfg);
    canal_error_info_t err;
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "/big", .handler = h_form,
                                                                    .max_body = 4097},
                                     NULL, &err),
                     CANAL_EINVAL);
    assert_non_null(strstr(err.message, "max_body_size"));
    canal_app_t *app2 = canal_app_create(&cfg); /* the first app keeps its registration error */
    canal_app_destroy(app);
    app = app2;
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "/form", .handler = h_form},
                                     NULL, NULL),
                     0);
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "/small", .handler = h_form,
                                                                    .max_body = 16},
                                     NULL, NULL),
                     0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);

    canal_test_response_t *r = post(t, "/form", "application/x-www-form-urlencoded; charset=UTF-8",
                                    "a=1&b=x+y&a=%C3%A9&c", 20);
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "{\"n\":2,\"a\":\"1\",\"fields\":[[\"a\",\"1\"],[\"b\",\"x y\"],[\"a\",\"é\"],[\"c\",\"\"]]}");
    canal_test_response_free(r);

    static const char mp[] = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nfirst\r\n"
                             "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\n\r\nfile\r\n"
                             "--B\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n\r\n--B--\r\n";
    r = post(t, "/form", "multipart/form-data; boundary=B", mp, sizeof(mp) - 1);
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "{\"n\":1,\"a\":\"first\",\"fields\":[[\"a\",\"first\"],[\"b\",\"\"]]}");
    canal_test_response_free(r);

    r = post(t, "/form", "application/x-www-form-urlencoded", "a=%zz", 5);
    assert_int_equal(r->status, 400);
    assert_non_null(strstr(r->body, "percent-escape"));
    canal_test_response_free(r);
    r = post(t, "/form", "text/plain", "a=1", 3);
    assert_int_equal(r->status, 415);
    assert_non_null(strstr(r->body, "not application/x-www-form-urlencoded or multipart/form-data"));
    canal_test_response_free(r);
    r = post(t, "/form", "multipart/form-data; boundary=B", "--B\r\nX: y\r\n\r\nv\r\n--B--", 21);
    assert_int_equal(r->status, 400);
    assert_non_null(strstr(r->body, "without Content-Disposition"));
    canal_test_response_free(r);
    r = post(t, "/form", NULL, NULL, 0); /* no body: a form without fields */
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "{\"n\":0,\"a\":\"\",\"fields\":[]}");
    canal_test_response_free(r);

    /* the route's own limit: 16 bytes pass, 17 are a 413 problem; the connection stays */
    r = post(t, "/small", "application/x-www-form-urlencoded", "a=12345678901234", 16);
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    r = post(t, "/small", "application/x-www-form-urlencoded", "a=123456789012345", 17);
    assert_int_equal(r->status, 413);
    assert_string_equal(canal_test_header(r, "content-type"), "application/problem+json");
    assert_non_null(strstr(r->body, "limit of 16 bytes"));
    canal_test_response_free(r);
    r = post(t, "/small", "application/x-www-form-urlencoded", "a=1", 3);
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_test_connection_count(t), 1);
    /* the app's limit is libh2o's 413 on every route */
    char *big = calloc(1, 4097);
    memset(big, 'x', 4096);
    r = post(t, "/form", "application/x-www-form-urlencoded", big, 4097);
    assert_int_equal(r->status, 413);
    canal_test_response_free(r);
    free(big);

    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(form_pairs),       cmocka_unit_test(form_errors),      cmocka_unit_test(multipart_boundary),
        cmocka_unit_test(multipart_parts),  cmocka_unit_test(multipart_errors), cmocka_unit_test(multipart_limits),
        cmocka_unit_test(request_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
