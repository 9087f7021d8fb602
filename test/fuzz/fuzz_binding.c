/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: requests end to end through the real server, in process. The app (see
 * fuzz_server.h) runs one worker thread on 127.0.0.1 and an ephemeral port; each input becomes
 * one HTTP/1.1 request sent on a new blocking connection, and the answer is read to the end.
 *
 * Input: byte 0 picks the method (bits 0-2) and the path (bits 3-5); byte 1 the content type
 * (bits 0-2) and flags: bit 3 chunked body, bit 4 a body padded past max_body_size, bit 5
 * "Expect: 100-continue", bit 6 the absolute form of the target (http://fuzz/...). The rest
 * splits on '\n' into: a path piece (the {id} segment, the echo's rest, or the whole target),
 * the query, the X-H header, the X-Name header, and the body (everything after the 4th '\n').
 * Bytes the request line cannot carry are percent-encoded; controls in header values become '_'.
 * Host and Connection: close are always sent.
 *
 * Checked: a complete answer arrives (head, and a body as long as Content-Length says); its
 * status is one of 200 201 204 400 404 405 413 414 431, or 500 when the Fail action failed
 * on purpose for this very request; every 400, 404, 405, 414 and 431 is
 * application/problem+json that jansson parses, an object with its "status" and a "title",
 * and the binding's 400s ("One or more
 * validation errors occurred.") carry an "errors" object whose members are arrays of strings,
 * named after declared parameters or "$body"; every 200/201 from an action or the echo is JSON
 * that parses; a 201 has a Location. Every 64 inputs, GET /health must still answer.
 * The actions themselves check what binding gave them (fuzz_server.h).
 *
 * LeakSanitizer stays on: libh2o's per-thread free lists, which look leaked once its worker
 * thread has ended, are suppressed as in test/lsan.supp (built in by fuzz_server.h, and
 * build.sh passes the file too). At exit the app is stopped and destroyed (atexit), so leaks
 * of the server's own memory are reported. Patterns are PCRE2 (lib/router/regex.c), which
 * reads only the bytes it is given: no interceptor to work around any more.
 *
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

static const char *const methods[8] = {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "FOO"};
static const char *const ctypes[8] = {
    NULL,
    "application/json",
    "application/json; charset=utf-8",
    "application/problem+json",
    "text/plain",
    "APPLICATION/JSON ",
    "application/vnd.fuzz+json;v=1",
    "application/jsonx",
};

static const char *const validation_title = "One or more validation errors occurred.";

/* the names an "errors" object may use: $body; a text field's name; a body field's JSON
 * pointer ("/n", or "/list/3" for an item) */
static int declared(const char *name)
{
    if (strcmp(name, "$body") == 0)
        return 1;
    for (const canal_action_def_t *a = fz_actions; a->name != NULL; a++)
        for (const canal_field_t *f = a->args->fields; f->name != NULL; f++) {
            if (f->source != CANAL_FROM_BODY && strcmp(f->name, name) == 0)
                return 1;
            size_t n = strlen(f->name);
            if (f->source == CANAL_FROM_BODY && name[0] == '/' && strncmp(name + 1, f->name, n) == 0 &&
                (name[n + 1] == '\0' || (f->type == CANAL_TYPE_ARRAY && name[n + 1] == '/' &&
                                          strspn(name + n + 2, "0123456789") == strlen(name + n + 2) &&
                                          name[n + 2] != '\0')))
                return 1;
        }
    return 0;
}

static void fail_with(const char *what, const struct fz_buf *req, const struct fz_reply *r)
{
    fprintf(stderr, "invariant failed: %s\n--- request (%zu bytes)\n%.*s\n--- answer (%zu bytes)\n%.*s\n", what,
            req->len, (int)(req->len > 3000 ? 3000 : req->len), req->p, r->raw_len,
            (int)(r->raw_len > 3000 ? 3000 : r->raw_len), r->raw ? r->raw : "");
    abort();
}

static void check_answer(const struct fz_buf *req, const struct fz_reply *r, int is_head,
                         unsigned long failures_before)
{
    if (!r->complete)
        fail_with("a complete answer", req, r);
    int st = r->status;
    if (st == 500) {
        if (atomic_load(&fz_deliberate_failures) == failures_before)
            fail_with("500 only from the deliberate failure", req, r);
        return;
    }
    if (st != 200 && st != 201 && st != 204 && st != 400 && st != 404 && st != 405 && st != 413 && st != 415 &&
        st != 414 && st != 431)
        fail_with("an expected status", req, r);
    if (is_head || st == 204 || st == 413)
        return;
    int is_problem = strncasecmp(r->ctype, "application/problem+json", 24) == 0;
    int is_json = strncasecmp(r->ctype, "application/json", 16) == 0;
    if (st == 400 || st == 404 || st == 405 || st == 414 || st == 431) {
        if (!is_problem)
            fail_with("canal's errors are application/problem+json", req, r);
    } else if (st == 201) {
        size_t n;
        if (fz_header(r, "location", &n) == NULL || !is_json)
            fail_with("201 with a Location and JSON", req, r);
    } else if (st == 200 && !is_json && strncmp(r->ctype, "text/plain", 10) != 0) {
        fail_with("200 with JSON or text", req, r);
    }
    if (!is_problem && !is_json)
        return;
    json_error_t err;
    json_t *j = json_loadb(r->body, r->body_len, JSON_DECODE_ANY, &err);
    if (j == NULL)
        fail_with("a JSON body that jansson parses", req, r);
    if (is_problem) {
        if (!json_is_object(j) || json_integer_value(json_object_get(j, "status")) != st ||
            !json_is_string(json_object_get(j, "title")))
            fail_with("problem details with status and title", req, r);
        const char *title = json_string_value(json_object_get(j, "title"));
        if (strcmp(title, validation_title) == 0) {
            json_t *errors = json_object_get(j, "errors");
            if (st != 400 || !json_is_object(errors) || json_object_size(errors) == 0)
                fail_with("a validation problem has an errors object", req, r);
            const char *key;
            json_t *list;
            json_object_foreach(errors, key, list)
            {
                if (!declared(key) || !json_is_array(list) || json_array_size(list) == 0)
                    fail_with("errors name declared parameters, with a list each", req, r);
                for (size_t i = 0; i < json_array_size(list); i++)
                    if (!json_is_string(json_array_get(list, i)))
                        fail_with("error messages are strings", req, r);
            }
        }
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long iterations;
    if (size < 2 || size > 16384)
        return 0;
    if (++iterations % 64 == 0)
        fz_health_check();

    unsigned sel = data[0], flags = data[1];
    const char *method = methods[sel & 7];
    int is_head = strcmp(method, "HEAD") == 0;
    const uint8_t *in = data + 2;
    size_t n = size - 2;

    /* the fields: path piece, query, X-H, X-Name, body */
    const uint8_t *field[5] = {NULL, NULL, NULL, NULL, NULL};
    size_t flen[5] = {0, 0, 0, 0, 0};
    size_t at = 0;
    for (int f = 0; f < 5 && at <= n; f++) {
        field[f] = in + at;
        const uint8_t *nl = f < 4 ? memchr(in + at, '\n', n - at) : NULL;
        flen[f] = nl ? (size_t)(nl - (in + at)) : n - at;
        at += flen[f] + 1;
    }

    struct fz_buf req = {0};
    fz_puts(&req, method);
    fz_puts(&req, " ");
    if (flags & 0x40)
        fz_puts(&req, "http://fuzz");
    switch ((sel >> 3) & 7) {
    case 0: fz_puts(&req, "/q/"); fz_put_target(&req, field[0], flen[0]); break;
    case 1: fz_puts(&req, "/b"); break;
    case 2: fz_puts(&req, "/b/"); fz_put_target(&req, field[0], flen[0]); break;
    case 3: fz_puts(&req, "/w"); break;
    case 4: fz_puts(&req, "/items"); break;
    case 5: fz_puts(&req, "/echo/"); fz_put_target(&req, field[0], flen[0]); break;
    case 6: fz_puts(&req, "/fail"); break;
    default:
        if (flen[0] == 0)
            fz_puts(&req, "/");
        else
            fz_put_target(&req, field[0], flen[0]);
    }
    if (field[1] != NULL && flen[1] > 0) {
        fz_puts(&req, "?");
        fz_put_target(&req, field[1], flen[1]);
    }
    fz_puts(&req, " HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n");
    if (field[2] != NULL) {
        fz_puts(&req, "X-H: ");
        fz_put_header_value(&req, field[2], flen[2]);
        fz_puts(&req, "\r\n");
    }
    if (field[3] != NULL) {
        fz_puts(&req, "X-Name: ");
        fz_put_header_value(&req, field[3], flen[3]);
        fz_puts(&req, "\r\n");
    }
    const char *ct = ctypes[flags & 7];
    if (ct != NULL) {
        fz_puts(&req, "Content-Type: ");
        fz_puts(&req, ct);
        fz_puts(&req, "\r\n");
    }
    if (flags & 0x20)
        fz_puts(&req, "Expect: 100-continue\r\n");
    const uint8_t *body = field[4] ? field[4] : (const uint8_t *)"";
    size_t blen = field[4] ? flen[4] : 0;
    size_t pad = (flags & 0x10) ? FUZZ_MAX_BODY + 1 : 0; /* spaces after the body: JSON-neutral */
    char hdr[64];
    if (flags & 0x08) {
        fz_puts(&req, "Transfer-Encoding: chunked\r\n\r\n");
        /* the body in chunks of up to 7 bytes, then the padding in one */
        for (size_t o = 0; o < blen; o += 7) {
            size_t c = blen - o < 7 ? blen - o : 7;
            snprintf(hdr, sizeof(hdr), "%zx\r\n", c);
            fz_puts(&req, hdr);
            fz_put(&req, body + o, c);
            fz_puts(&req, "\r\n");
        }
        if (pad) {
            snprintf(hdr, sizeof(hdr), "%zx\r\n", pad);
            fz_puts(&req, hdr);
            for (size_t i = 0; i < pad; i++)
                fz_put(&req, " ", 1);
            fz_puts(&req, "\r\n");
        }
        fz_puts(&req, "0\r\n\r\n");
    } else {
        snprintf(hdr, sizeof(hdr), "Content-Length: %zu\r\n\r\n", blen + pad);
        fz_puts(&req, hdr);
        fz_put(&req, body, blen);
        for (size_t i = 0; i < pad; i++)
            fz_put(&req, " ", 1);
    }

    unsigned long failures_before = atomic_load(&fz_deliberate_failures);
    struct fz_reply r;
    if (fz_request(req.p, req.len, is_head, &r) != 0)
        fail_with("an answer in time", &req, &r);
    if (r.reset && r.status == 0 && (pad || blen > FUZZ_MAX_BODY)) {
        /* h2o answered 413 and closed with the body unread: the kernel may reset the
         * connection before the answer is read; the server must still be up */
        fz_reply_free(&r);
        fz_health_check();
    } else {
        static int verbose = -1;
        if (verbose < 0)
            verbose = getenv("CANAL_FUZZ_VERBOSE") != NULL;
        if (verbose) {
            const char *eol = strstr(req.p, "\r\n");
            fprintf(stderr, "%d %.*s -> %.*s\n", r.status, (int)(eol - req.p), req.p,
                    (int)(r.body_len > 200 ? 200 : r.body_len), r.body ? r.body : "");
        }
        check_answer(&req, &r, is_head, failures_before);
        fz_reply_free(&r);
    }
    free(req.p);
    return 0;
}
