/* SPDX-License-Identifier: MIT */
/*
 * canal-guardsapp: the guards of test/e2e/guards.sh, with the rules of issue 18's
 * canal-secure for cookies, rate limits and security headers (authentication is another
 * part's: here a login is "POST /login?user=alice&password=secret").
 *
 *   GET  /public   200
 *   POST /login    200 and Set-Cookie sid (signed, a new session), or 401
 *   GET  /session  200 {"user": ...} for a valid sid, else 401 (WWW-Authenticate: Cookie)
 *   POST /logout   200, the session revoked and sid deleted, or 401
 *   GET  /limited  --rate R requests per --window W seconds per client address: 200, or 429
 *   GET  /unlimited  the same handler without the limit (for the cost of a limit)
 * The security headers preset is on for the whole app (HSTS on the TLS listener only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>

static canal_sessions_t *sessions;

static int unauthorized(canal_req_t *req)
{
    canal_res_header(req, "www-authenticate", "Cookie realm=\"guards\"");
    return canal_res_problem(req, 401, "no valid session");
}

static int public(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "public\n");
}

static int login(canal_req_t *req, void *data)
{
    canal_str_t user = {NULL, 0}, pw = {NULL, 0};
    if (canal_req_query(req, "user", &user) != 1 || canal_req_query(req, "password", &pw) != 1 ||
        user.len != 5 || memcmp(user.base, "alice", 5) != 0 || pw.len != 6 || memcmp(pw.base, "secret", 6) != 0)
        return unauthorized(req);
    int rc = canal_session_begin(req, sessions, user);
    return rc != 0 ? canal_req_fail(req, "session: %s", canal_strerror(rc)) : canal_res_status(req, 204);
}

static int session(canal_req_t *req, void *data)
{
    canal_str_t user;
    if (canal_session_get(req, sessions, &user) != 0)
        return unauthorized(req);
    return canal_res_json_new(req, 200, json_pack("{s:s%}", "user", user.base, user.len));
}

static int logout(canal_req_t *req, void *data)
{
    if (canal_session_end(req, sessions) != 0)
        return unauthorized(req);
    return canal_res_status(req, 204);
}

static int limited(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "ok\n");
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1;
    if (canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-guardsapp: %s\n", err.message);
        return 2;
    }
    unsigned rate = 5, window = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rate") == 0)
            rate = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--window") == 0)
            window = (unsigned)atoi(argv[i + 1]);
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_str_t key = {"guards e2e cookie secret, 32 b!!", 32};
    canal_signer_t *signer = canal_signer_create(&key, 1, &err);
    sessions = canal_sessions_create(app, &(canal_sessions_options_t){.signer = signer}, &err);
    canal_rate_limit_t *limit = canal_rate_limit_create(
        app, &(canal_rate_limit_options_t){.requests = rate, .window_ms = window * 1000, .name = "limited"}, &err);
    if (signer == NULL || sessions == NULL || limit == NULL) {
        fprintf(stderr, "canal-guardsapp: %s\n", err.message);
        return 1;
    }
    canal_app_security_headers(app, NULL, &(canal_security_headers_t){0});
    canal_app_get(app, "/public", public, NULL);
    canal_app_post(app, "/login", login, NULL);
    canal_app_get(app, "/session", session, NULL);
    canal_app_post(app, "/logout", logout, NULL);
    canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "/limited", .handler = limited, .options = {CANAL_RATE_LIMIT(limit)}},
                    NULL, NULL);
    canal_app_get(app, "/unlimited", limited, NULL);
    canal_app_metrics(app, "/metrics", NULL);
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    fprintf(stderr, "canal-guardsapp listening on http://%s:%u\n", cfg.host, canal_app_port(app, 0));
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_signer_destroy(signer);
    return rc == 0 ? 0 : 1;
}
