/* SPDX-License-Identifier: MIT */
/*
 * Sessions as an authentication scheme (canal_auth_session()) through the test client: a
 * policy that asks for a session, the principal it gives, logout; where a custom scheme's
 * credential travels in the OpenAPI document (canal_custom_auth_config_t.in); and a scheme
 * whose store is unreachable (CANAL_AUTH_UNAVAILABLE: 503).
 */
#include "test.h"
#include <canal.h>
#include <canal/testing.h>

static canal_sessions_t *sessions;

static int login(canal_req_t *req, void *data)
{
    canal_str_t user;
    if (canal_req_form(req, "user", &user) != 1)
        return canal_res_problem(req, 400, "no user");
    return canal_session_begin(req, sessions, user) == 0 ? canal_res_status(req, 204) : -1;
}

static int logout(canal_req_t *req, void *data)
{
    return canal_session_end(req, sessions) == 0 ? canal_res_status(req, 204) : canal_res_problem(req, 401, NULL);
}

static int me(canal_req_t *req, void *data)
{
    const canal_principal_t *p = canal_req_principal(req);
    canal_str_t who = canal_principal_subject(p);
    return canal_res_text(req, 200, canal_req_printf(req, "%s %.*s", canal_principal_scheme(p), (int)who.len, who.base));
}

static canal_auth_result_t never(canal_req_t *req, canal_principal_t *p, void *data)
{
    return CANAL_AUTH_NONE;
}

/* the "sid=..." of a Set-Cookie, as a Cookie field's value */
static char *cookie_of(const canal_test_response_t *r)
{
    const char *set = canal_test_header(r, "set-cookie");
    assert_non_null(set);
    return strndup(set, strcspn(set, ";"));
}

static canal_test_response_t *with_cookie(canal_test_t *t, const char *method, const char *path, const char *cookie)
{
    canal_kv_t h[] = {{"Cookie", cookie}};
    return canal_test_request(t, method, path, h, cookie ? 1 : 0, NULL, 0);
}

static void test_session_scheme(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.threads = 1;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    canal_signer_t *signer = canal_signer_create(&(canal_str_t){"a cookie key of 32 bytes, random!", 33}, 1, &err);
    assert_non_null(signer);
    sessions = canal_sessions_create(app, &(canal_sessions_options_t){.signer = signer}, &err);
    assert_non_null(sessions);
    canal_auth_t *session = canal_auth_session(&(canal_session_auth_config_t){.sessions = sessions}, &err);
    canal_auth_t *token = canal_auth_custom(&(canal_custom_auth_config_t){.name = "Token", .authenticate = never,
                                                                          .in = CANAL_CREDENTIAL_HEADER,
                                                                          .param = "X-Token"},
                                            &err);
    canal_auth_t *sig = canal_auth_custom(&(canal_custom_auth_config_t){.name = "Signature", .authenticate = never},
                                          &err);
    assert_non_null(session);
    assert_non_null(token);
    assert_non_null(sig);
    const canal_policy_t logged_in = {.schemes = {session}}, either = {.schemes = {token, sig}};
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "login", .handler = login},
                                     NULL, &err), 0);
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "logout", .handler = logout,
                                                                   .options = {CANAL_POLICY(&logged_in)}},
                                     NULL, &err), 0);
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "me", .handler = me,
                                                                   .options = {CANAL_POLICY(&logged_in)}},
                                     NULL, &err), 0);
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "other", .handler = me,
                                                                   .options = {CANAL_POLICY(&either)}},
                                     NULL, &err), 0);

    /* the document: the session in its cookie, the custom schemes where they say */
    json_t *doc = canal_openapi_build(app, NULL, NULL, NULL);
    char *text = json_dumps(json_object_get(json_object_get(doc, "components"), "securitySchemes"), JSON_SORT_KEYS);
    assert_non_null(strstr(text, "\"session\": {\"description\": \"A session cookie (canal_session_begin()).\", "
                                 "\"in\": \"cookie\", \"name\": \"sid\", \"type\": \"apiKey\"}"));
    assert_non_null(strstr(text, "\"Token\": {\"description\": \"A scheme of the app's own.\", \"in\": \"header\", "
                                 "\"name\": \"X-Token\", \"type\": \"apiKey\"}"));
    assert_non_null(strstr(text, "\"Signature\": {\"description\": \"A scheme of the app's own.\", \"scheme\": "
                                 "\"signature\", \"type\": \"http\"}"));
    free(text);
    json_decref(doc);

    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/me");
    assert_int_equal(r->status, 401);
    canal_test_response_free(r);
    canal_kv_t form[] = {{"Content-Type", "application/x-www-form-urlencoded"}};
    r = canal_test_request(t, "POST", "/login", form, 1, "user=alice", 10);
    assert_int_equal(r->status, 204);
    char *cookie = cookie_of(r);
    canal_test_response_free(r);
    r = with_cookie(t, "GET", "/me", cookie);
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "session alice");
    canal_test_response_free(r);
    r = with_cookie(t, "GET", "/me", "sid=forged.value"); /* a cookie that does not verify */
    assert_int_equal(r->status, 401);
    canal_test_response_free(r);
    r = with_cookie(t, "POST", "/logout", cookie);
    assert_int_equal(r->status, 204);
    canal_test_response_free(r);
    r = with_cookie(t, "GET", "/me", cookie); /* revoked: the copy of the cookie is worthless */
    assert_int_equal(r->status, 401);
    canal_test_response_free(r);
    free(cookie);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
    canal_auth_destroy(session);
    canal_auth_destroy(token);
    canal_auth_destroy(sig);
    canal_signer_destroy(signer);
}

static canal_auth_result_t store_down(canal_req_t *req, canal_principal_t *p, void *data)
{
    return CANAL_AUTH_UNAVAILABLE;
}

/* A scheme whose store cannot be reached (CANAL_AUTH_UNAVAILABLE): 503 with Retry-After and
 * no challenge, whatever the policy's other schemes said, unless one of them let it in. */
static void test_unavailable(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.threads = 1;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    canal_auth_t *down = canal_auth_custom(&(canal_custom_auth_config_t){.name = "Store", .authenticate = store_down,
                                                                         .challenge = "Store"},
                                           &err);
    canal_auth_t *key = canal_auth_api_key(&(canal_api_key_config_t){.key = "a key of 16 bytes!", .key_len = 18}, &err);
    assert_non_null(down);
    assert_non_null(key);
    const canal_policy_t pol = {.schemes = {down, key}};
    assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "me", .handler = me,
                                                                   .options = {CANAL_POLICY(&pol)}},
                                     NULL, &err), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/me");
    assert_int_equal(r->status, 503);
    assert_string_equal(canal_test_header(r, "retry-after"), "1");
    assert_null(canal_test_header(r, "www-authenticate"));
    assert_non_null(strstr(r->body, "\"status\":503"));
    canal_test_response_free(r);
    canal_kv_t h[] = {{"X-Api-Key", "a key of 16 bytes!"}};
    r = canal_test_request(t, "GET", "/me", h, 1, NULL, 0); /* another scheme lets it in */
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
    canal_auth_destroy(down);
    canal_auth_destroy(key);
}

static void test_refused(void **state)
{
    canal_error_info_t err;
    assert_null(canal_auth_session(&(canal_session_auth_config_t){.sessions = NULL}, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    assert_null(canal_auth_custom(&(canal_custom_auth_config_t){.name = "T", .authenticate = never,
                                                                .in = CANAL_CREDENTIAL_QUERY},
                                  &err)); /* no parameter name */
    assert_int_equal(err.code, CANAL_EINVAL);
    assert_null(canal_auth_custom(&(canal_custom_auth_config_t){.name = "T", .authenticate = never,
                                                                .in = CANAL_CREDENTIAL_COOKIE, .param = "a b"},
                                  &err));
    assert_null(canal_auth_custom(&(canal_custom_auth_config_t){.name = "T", .authenticate = never,
                                                                .http_scheme = "two words"},
                                  &err));
    assert_null(canal_auth_custom(&(canal_custom_auth_config_t){.name = "T", .authenticate = never,
                                                                .in = (canal_credential_in_t)9, .param = "p"},
                                  &err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_scheme),
        cmocka_unit_test(test_unavailable),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
