/* SPDX-License-Identifier: MIT */
/*
 * Tests of the notes API on the test client (canal/testing.h): the app runs in this process
 * on a free 127.0.0.1 port, a fresh one per test, and each test sends it HTTP requests and
 * checks the answers. test/e2e/notes.sh runs the program itself with curl.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <canal/testing.h>
#include "notes.h"

struct fixture {
    canal_app_t *app;
    canal_mvc_t *mvc;
    canal_test_t *client;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 2;
    cfg.request_id = 1; /* problems carry "requestId": the schema's own errors too */
    canal_error_info_t err = {0};
    f->app = canal_app_create(&cfg);
    f->mvc = f->app ? canal_mvc_create(f->app) : NULL;
    /* a fresh database per test: SQLite in memory (test/e2e/notes.sh runs the program on
     * PostgreSQL too) */
    if (f->mvc == NULL || notes_db(f->app, "sqlite::memory:", NULL, &err) != 0 ||
        notes_routes(f->app, f->mvc, &err) != 0 ||
        (f->client = canal_test_start(f->app, &err)) == NULL) {
        fprintf(stderr, "setup: %s\n", err.message);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    int rc = canal_test_stop(f->client);
    canal_app_destroy(f->app);
    canal_mvc_destroy(f->mvc);
    free(f);
    return rc;
}

static const canal_kv_t json_header[] = {{"Content-Type", "application/json"}};

/* Sends text as a JSON body; the answer must have status. */
static canal_test_response_t *send_json(canal_test_t *t, const char *method, const char *target, const char *text,
                                        int status)
{
    canal_test_response_t *r = canal_test_request(t, method, target, json_header, 1, text, strlen(text));
    assert_non_null(r);
    assert_int_equal(r->status, status);
    return r;
}

/* The keys of a 400 problem's "errors", sorted, comma-separated, into buf. */
static const char *error_keys(const canal_test_response_t *r, char *buf, size_t size)
{
    json_t *p = canal_test_response_json(r, NULL), *errors = json_object_get(p, "errors");
    assert_non_null(errors);
    const char *keys[64];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(errors, k, v) if (n < 64) keys[n++] = k;
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful */
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *x = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = x;
        }
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s", i ? "," : "", keys[i]);
    json_decref(p);
    return buf;
}

static void create_and_read(void **state)
{
    struct fixture *f = *state;
    canal_test_response_t *r = send_json(f->client, "POST", "/api/notes",
                                         "{\"title\":\"Groceries\",\"tags\":[\"food\"],\"items\":[{\"text\":\"milk\","
                                         "\"qty\":2},{\"text\":\"eggs\",\"qty\":12,\"done\":true}]}",
                                         201);
    assert_string_equal(canal_test_header(r, "location"), "/api/notes/1");
    json_t *note = canal_test_response_json(r, NULL);
    const char *created = json_string_value(json_object_get(note, "created"));
    assert_non_null(created);
    assert_int_equal(strlen(created), 20); /* 2026-12-02T13:58:52Z */
    char want[512];
    snprintf(want, sizeof(want),
             "{\"id\":1,\"title\":\"Groceries\",\"body\":null,\"tags\":[\"food\"],\"items\":[{\"text\":\"milk\",\"qty\":2,"
             "\"done\":false},{\"text\":\"eggs\",\"qty\":12,\"done\":true}],\"state\":\"draft\",\"created\":\"%s\"}",
             created);
    assert_string_equal(r->body, want);
    json_decref(note);
    canal_test_response_free(r);

    r = canal_test_get(f->client, "/api/notes/1");
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, want);
    canal_test_response_free(r);

    /* the view cookie, among others, quoted or not */
    static const char *const compact[] = {"view=compact", "a=1; view=compact; b=2", "view=\"compact\""};
    for (size_t i = 0; i < sizeof(compact) / sizeof(compact[0]); i++) {
        canal_kv_t cookie = {"Cookie", compact[i]};
        r = canal_test_request(f->client, "GET", "/api/notes/1", &cookie, 1, NULL, 0);
        assert_int_equal(r->status, 200);
        assert_string_equal(r->body, "{\"id\":1,\"title\":\"Groceries\",\"state\":\"draft\"}");
        canal_test_response_free(r);
    }
    canal_kv_t full = {"Cookie", "view=full"};
    r = canal_test_request(f->client, "GET", "/api/notes/1", &full, 1, NULL, 0);
    assert_string_equal(r->body, want);
    canal_test_response_free(r);
    canal_kv_t bad = {"Cookie", "view=Compact"};
    r = canal_test_request(f->client, "GET", "/api/notes/1", &bad, 1, NULL, 0);
    assert_int_equal(r->status, 400);
    assert_string_equal(error_keys(r, want, sizeof(want)), "view");
    canal_test_response_free(r);

    r = canal_test_get(f->client, "/api/notes/2");
    assert_int_equal(r->status, 404);
    assert_string_equal(canal_test_header(r, "content-type"), "application/problem+json");
    canal_test_response_free(r);
}

static void body_errors(void **state)
{
    struct fixture *f = *state;
    char keys[512];
    canal_test_response_t *r =
        send_json(f->client, "POST", "/api/notes",
                  "{\"title\":\"\",\"body\":[],\"tags\":[\"ok\",\"Bad\",\"\"],\"items\":[{\"text\":\"a\",\"qty\":1},"
                  "{\"qty\":5},{\"text\":\"\",\"qty\":1},{\"text\":\"c\",\"qty\":100}],\"state\":\"done\"}",
                  400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)),
                        "/body,/items/1/text,/items/2/text,/items/3/qty,/state,/tags/1,/tags/2,/title");
    json_t *p = canal_test_response_json(r, NULL);
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(p, "errors"), "/items/3/qty"), 0)),
                        "The field qty must be between 1 and 99.");
    assert_string_equal(json_string_value(json_object_get(p, "requestId")), canal_test_header(r, "x-request-id"));
    json_decref(p);
    canal_test_response_free(r);

    /* the schema's validate rule: the same problem, with the request ID */
    r = send_json(f->client, "POST", "/api/notes", "{\"title\":\"t\",\"state\":\"published\"}", 400);
    p = canal_test_response_json(r, NULL);
    assert_string_equal(json_string_value(json_object_get(p, "title")), "One or more validation errors occurred.");
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(p, "errors"), "/body"), 0)),
                        "A published note needs a body.");
    assert_non_null(json_object_get(p, "requestId"));
    assert_int_equal(json_object_size(json_object_get(p, "errors")), 1);
    json_decref(p);
    canal_test_response_free(r);
    r = send_json(f->client, "POST", "/api/notes", "{\"title\":\"t\",\"state\":\"published\",\"body\":\"\"}", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "/body");
    canal_test_response_free(r);
    canal_test_response_free(
        send_json(f->client, "POST", "/api/notes", "{\"title\":\"t\",\"state\":\"published\",\"body\":\"b\"}", 201));

    /* the limits on counts: 8 tags, 50 items */
    r = send_json(f->client, "POST", "/api/notes", "{\"title\":\"t\",\"tags\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}",
                  400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "/tags");
    canal_test_response_free(r);
    char big[4096] = "{\"title\":\"t\",\"items\":[";
    for (int i = 0; i < 51; i++)
        strcat(big, i ? ",{\"text\":\"x\",\"qty\":1}" : "{\"text\":\"x\",\"qty\":1}");
    strcat(big, "]}");
    r = send_json(f->client, "POST", "/api/notes", big, 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "/items");
    canal_test_response_free(r);
    strcpy(strstr(big, ",{\"text\":\"x\",\"qty\":1}]}"), "]}"); /* 50 fit */
    canal_test_response_free(send_json(f->client, "POST", "/api/notes", big, 201));

    /* not JSON, not an object, not application/json */
    r = send_json(f->client, "POST", "/api/notes", "{\"title\":", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "$body");
    canal_test_response_free(r);
    r = send_json(f->client, "POST", "/api/notes", "\"t\"", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "$body");
    canal_test_response_free(r);
    canal_kv_t text = {"Content-Type", "text/plain"};
    r = canal_test_request(f->client, "POST", "/api/notes", &text, 1, "{}", 2);
    assert_int_equal(r->status, 415);
    canal_test_response_free(r);
}

static const canal_kv_t form_type[] = {{"Content-Type", "application/x-www-form-urlencoded"}};

static canal_test_response_t *send_form(canal_test_t *t, const char *target, const char *text, int status)
{
    canal_test_response_t *r = canal_test_request(t, "POST", target, form_type, 1, text, strlen(text));
    assert_non_null(r);
    assert_int_equal(r->status, status);
    return r;
}

static void form_and_list(void **state)
{
    struct fixture *f = *state;
    char keys[256];
    canal_test_response_t *r = send_form(f->client, "/api/notes/quick", "title=Call+Bob&tags=phone&tags=work", 201);
    assert_string_equal(canal_test_header(r, "location"), "/api/notes/1");
    json_t *n = canal_test_response_json(r, NULL);
    assert_string_equal(json_string_value(json_object_get(n, "title")), "Call Bob");
    assert_true(json_is_null(json_object_get(n, "body")));
    assert_int_equal(json_array_size(json_object_get(n, "tags")), 2);
    assert_string_equal(json_string_value(json_object_get(n, "state")), "draft");
    json_decref(n);
    canal_test_response_free(r);
    canal_test_response_free(send_form(f->client, "/api/notes/quick", "title=Read&body=a+book&tags=home", 201));
    canal_test_response_free(send_json(f->client, "POST", "/api/notes",
                                       "{\"title\":\"Essay\",\"body\":\"...\",\"state\":\"published\",\"tags\":[\"work\"]}",
                                       201));

    r = send_form(f->client, "/api/notes/quick", "tags=Work&tags=ok", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "tags,title");
    canal_test_response_free(r);
    r = send_form(f->client, "/api/notes/quick", "title=a&title=b", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "title");
    canal_test_response_free(r);
    r = send_json(f->client, "POST", "/api/notes/quick", "{\"title\":\"t\"}", 415);
    canal_test_response_free(r);

    static const struct {
        const char *target, *ids;
    } lists[] = {
        {"/api/notes", "1,2,3"},
        {"/api/notes?tag=work", "1,3"},
        {"/api/notes?tag=work&state=published", "3"},
        {"/api/notes?state=draft", "1,2"},
        {"/api/notes?size=2", "1,2"},
        {"/api/notes?size=2&index=1", "3"},
        {"/api/notes?index=5", ""},
        {"/api/notes?tag=nothing", ""},
    };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        r = canal_test_get(f->client, lists[i].target);
        assert_int_equal(r->status, 200);
        json_t *list = canal_test_response_json(r, NULL), *x;
        char ids[64] = "";
        size_t k, o = 0;
        json_array_foreach(list, k, x) o += (size_t)snprintf(ids + o, sizeof(ids) - o, "%s%d", k ? "," : "",
                                                             (int)json_integer_value(json_object_get(x, "id")));
        assert_string_equal(ids, lists[i].ids);
        json_decref(list);
        canal_test_response_free(r);
    }
    canal_kv_t compact = {"Cookie", "view=compact"};
    r = canal_test_request(f->client, "GET", "/api/notes?state=published", &compact, 1, NULL, 0);
    assert_string_equal(r->body, "[{\"id\":3,\"title\":\"Essay\",\"state\":\"published\"}]");
    canal_test_response_free(r);
    r = canal_test_get(f->client, "/api/notes?index=-1&size=0&state=all");
    assert_int_equal(r->status, 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "index,size,state");
    canal_test_response_free(r);
}

static void update_and_delete(void **state)
{
    struct fixture *f = *state;
    char keys[256];
    canal_test_response_t *r = send_json(f->client, "POST", "/api/notes", "{\"title\":\"Old\",\"tags\":[\"x\"]}", 201);
    json_t *n = canal_test_response_json(r, NULL);
    char created[32];
    snprintf(created, sizeof(created), "%s", json_string_value(json_object_get(n, "created")));
    json_decref(n);
    canal_test_response_free(r);

    r = send_json(f->client, "PUT", "/api/notes/1",
                  "{\"title\":\"New\",\"body\":\"b\",\"state\":\"published\",\"items\":[{\"text\":\"i\",\"qty\":3}]}", 200);
    char want[256];
    snprintf(want, sizeof(want),
             "{\"id\":1,\"title\":\"New\",\"body\":\"b\",\"tags\":[],\"items\":[{\"text\":\"i\",\"qty\":3,\"done\":false}],"
             "\"state\":\"published\",\"created\":\"%s\"}",
             created);
    assert_string_equal(r->body, want);
    canal_test_response_free(r);
    r = canal_test_get(f->client, "/api/notes/1");
    assert_string_equal(r->body, want);
    canal_test_response_free(r);

    /* PUT binds the body whole: the same pointers, the same rule */
    r = send_json(f->client, "PUT", "/api/notes/1", "{\"title\":\"t\",\"items\":[{},{\"text\":\"a\",\"qty\":0}]}", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "/items/0/qty,/items/0/text,/items/1/qty");
    canal_test_response_free(r);
    r = send_json(f->client, "PUT", "/api/notes/1", "{\"title\":\"t\",\"state\":\"published\"}", 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "/body");
    canal_test_response_free(r);
    canal_test_response_free(send_json(f->client, "PUT", "/api/notes/7", "{\"title\":\"t\"}", 404));

    r = canal_test_request(f->client, "DELETE", "/api/notes/1", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 204);
    canal_test_response_free(r);
    r = canal_test_request(f->client, "DELETE", "/api/notes/1", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 404);
    canal_test_response_free(r);
    r = canal_test_get(f->client, "/api/notes");
    assert_string_equal(r->body, "[]");
    canal_test_response_free(r);
}

/* A multipart/form-data body with a description field (unless NULL) and one file part of
 * len bytes of data (unless data is NULL). */
static char *multipart(const char *description, const void *data, size_t len, size_t *out)
{
    char *b = malloc(len + 1024);
    size_t o = 0;
    if (description != NULL)
        o += (size_t)sprintf(b + o, "--XyZ\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\n%s\r\n",
                             description);
    if (data != NULL) {
        o += (size_t)sprintf(b + o, "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
                                    "Content-Type: application/octet-stream\r\n\r\n");
        memcpy(b + o, data, len);
        o += len;
        o += (size_t)sprintf(b + o, "\r\n");
    }
    o += (size_t)sprintf(b + o, "--XyZ--\r\n");
    *out = o;
    return b;
}

static const canal_kv_t multipart_type[] = {{"Content-Type", "multipart/form-data; boundary=XyZ"}};

static void attachments(void **state)
{
    struct fixture *f = *state;
    char keys[256];
    canal_test_response_free(send_json(f->client, "POST", "/api/notes", "{\"title\":\"t\"}", 201));
    /* bytes a file may hold: CR, LF, NUL, something like a delimiter */
    static const char bytes[] = "\r\n--XyZ no\r\n\0\xff";
    size_t len;
    char *body = multipart("receipt", bytes, sizeof(bytes), &len);
    canal_test_response_t *r =
        canal_test_request(f->client, "POST", "/api/notes/1/attachments", multipart_type, 1, body, len);
    free(body);
    assert_int_equal(r->status, 201);
    assert_string_equal(r->body, "{\"id\":1,\"note\":1,\"filename\":\"a.bin\",\"contentType\":\"application/octet-stream\","
                                 "\"description\":\"receipt\",\"size\":15}");
    canal_test_response_free(r);

    /* the route's limit is NOTES_MAX_UPLOAD bytes of body, below the app's 1 MiB */
    char *file = calloc(1, NOTES_MAX_UPLOAD);
    body = multipart(NULL, file, NOTES_MAX_UPLOAD - 200, &len);
    assert_true(len <= NOTES_MAX_UPLOAD);
    r = canal_test_request(f->client, "POST", "/api/notes/1/attachments", multipart_type, 1, body, len);
    free(body);
    assert_int_equal(r->status, 201);
    json_t *meta = canal_test_response_json(r, NULL);
    assert_true(json_is_null(json_object_get(meta, "description")));
    assert_int_equal(json_integer_value(json_object_get(meta, "size")), NOTES_MAX_UPLOAD - 200);
    json_decref(meta);
    canal_test_response_free(r);
    body = multipart(NULL, file, NOTES_MAX_UPLOAD, &len);
    r = canal_test_request(f->client, "POST", "/api/notes/1/attachments", multipart_type, 1, body, len);
    free(body);
    free(file);
    assert_int_equal(r->status, 413);
    assert_string_equal(canal_test_header(r, "content-type"), "application/problem+json");
    canal_test_response_free(r);

    body = multipart("no file", NULL, 0, &len);
    r = canal_test_request(f->client, "POST", "/api/notes/1/attachments", multipart_type, 1, body, len);
    free(body);
    assert_int_equal(r->status, 400);
    assert_string_equal(error_keys(r, keys, sizeof(keys)), "file");
    canal_test_response_free(r);
    canal_test_response_free(send_json(f->client, "POST", "/api/notes/1/attachments", "{}", 415));
    /* a filename or a content type that is not UTF-8 is the client's fault, as for any bound
     * string: a 400, not a 500 from the JSON writer when the app echoes it */
    static const char *const bad_parts[] = {
        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\xff.txt\"\r\n\r\nhi\r\n--XyZ--\r\n",
        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/\xc3\r\n\r\n"
        "hi\r\n--XyZ--\r\n"};
    for (size_t i = 0; i < sizeof(bad_parts) / sizeof(bad_parts[0]); i++) {
        r = canal_test_request(f->client, "POST", "/api/notes/1/attachments", multipart_type, 1, bad_parts[i],
                               strlen(bad_parts[i]));
        assert_int_equal(r->status, 400);
        assert_string_equal(error_keys(r, keys, sizeof(keys)), "file");
        canal_test_response_free(r);
    }
    body = multipart(NULL, "x", 1, &len);
    r = canal_test_request(f->client, "POST", "/api/notes/2/attachments", multipart_type, 1, body, len);
    free(body);
    assert_int_equal(r->status, 404);
    canal_test_response_free(r);
}

static void openapi(void **state)
{
    struct fixture *f = *state;
    canal_test_response_t *r = canal_test_get(f->client, "/openapi.json");
    assert_int_equal(r->status, 200);
    json_t *doc = canal_test_response_json(r, NULL), *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    static const char *const names[] = {"Note", "NoteInput", "NoteItem", "NoteSummary", "Attachment"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_non_null(json_object_get(schemas, names[i]));
    json_t *post = json_object_get(json_object_get(json_object_get(doc, "paths"), "/api/notes"), "post");
    json_t *created = json_object_get(json_object_get(post, "responses"), "201");
    assert_non_null(created);
    json_t *location = json_object_get(json_object_get(created, "headers"), "Location");
    assert_string_equal(json_string_value(json_object_get(json_object_get(location, "schema"), "type")), "string");
    assert_string_equal(json_string_value(json_object_get(location, "description")), "The new note's URL.");
    json_t *upload = json_object_get(json_object_get(json_object_get(doc, "paths"), "/api/notes/{id}/attachments"), "post");
    assert_non_null(json_object_get(json_object_get(json_object_get(upload, "requestBody"), "content"), "multipart/form-data"));
    json_decref(doc);
    canal_test_response_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(create_and_read, setup, teardown),
        cmocka_unit_test_setup_teardown(body_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(form_and_list, setup, teardown),
        cmocka_unit_test_setup_teardown(update_and_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(attachments, setup, teardown),
        cmocka_unit_test_setup_teardown(openapi, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
