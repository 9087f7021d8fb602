/* SPDX-License-Identifier: MIT */
/*
 * canal-secure's controllers: the session routes and the rate-limited one, with their
 * policies and limit declared in the tables. Two session controllers share the actions'
 * code; each has its own sessions object (its state: the cookie secret it signs with) and
 * its own cookie scheme (its policy), and "Login" overrides that policy with Basic.
 */
#include "secure.h"

/* POST /login: the Basic policy let alice in; a new session holds her name. */
static int login(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    int rc = canal_session_begin(req, canal_ctx_state(ctx), canal_principal_subject(canal_req_principal(req)));
    if (rc == CANAL_ECLOSED) /* --store: Redis is unreachable */
        return canal_redis_unavailable(req);
    return rc != 0 ? canal_req_fail(req, "session: %s", canal_strerror(rc)) : canal_res_status(req, 204);
}

/* GET /session: the cookie policy found the session. */
static int show(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_str_t user = canal_principal_subject(canal_req_principal(req));
    return canal_res_json_new(req, 200, json_pack("{s:s%}", "user", user.base, user.len));
}

/* POST /logout: revoked server-side, and the cookie deleted. */
static int logout(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    if (canal_session_end(req, canal_ctx_state(ctx)) != 0) /* revoked meanwhile by another request */
        return canal_res_problem(req, 401, "no valid session");
    return canal_res_status(req, 204);
}

static int limited(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_text(req, 200, "ok\n");
}

int secure_controller_mode(canal_mvc_t *mvc, const secure_t *s, canal_error_info_t *err)
{
    static canal_policy_t basic, cookie, cookie_other, anyone;
    basic = (canal_policy_t){.schemes = {s->basic}};
    cookie = (canal_policy_t){.schemes = {s->cookie}};
    cookie_other = (canal_policy_t){.schemes = {s->cookie_other}};
    anyone = (canal_policy_t){.anonymous = 1};
    const canal_action_def_t session[] = {
        {.name = "Login", .methods = "POST", .routes = {"login"}, .handler = login, .options = {CANAL_POLICY(&basic)}},
        {.name = "Show", .routes = {"session"}, .handler = show},
        {.name = "Logout", .methods = "POST", .routes = {"logout"}, .handler = logout},
        {.name = NULL}};
    const canal_action_def_t other[] = {
        {.name = "Login", .methods = "POST", .routes = {"login"}, .handler = login, .options = {CANAL_POLICY(&basic)}},
        {.name = "Show", .routes = {"session"}, .handler = show},
        {.name = NULL}};
    const canal_action_def_t limit[] = {
        {.name = "Index", .routes = {"limited"}, .handler = limited, .options = {CANAL_RATE_LIMIT(s->limit)}},
        {.name = NULL}};
    const canal_controller_def_t ctls[] = {
        {.name = "Session", .state = s->sessions, .options = {CANAL_POLICY(&cookie)}, .actions = session},
        {.name = "OtherSession", .prefix = "other", .state = s->sessions_other, .options = {CANAL_POLICY(&cookie_other)},
         .actions = other},
        {.name = "Limited", .options = {CANAL_POLICY(&anyone)}, .actions = limit},
    };
    for (size_t i = 0; i < sizeof(ctls) / sizeof(ctls[0]); i++) {
        int rc = canal_mvc_add_controller(mvc, &ctls[i], NULL, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}
