/* SPDX-License-Identifier: MIT */
/*
 * canal-secure's router-mode routes: each spec names its policy, and the server checks it
 * before the handler runs, so a handler only ever sees an authenticated principal (or, for
 * /public, none).
 */
#include "secure.h"

static int public(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "public\n");
}

/* /me, /hs/me, /admin: {"sub": ..., "scopes": [...]} of the token's principal. */
static int me(canal_req_t *req, void *data)
{
    const canal_principal_t *p = canal_req_principal(req);
    canal_str_t sub = canal_principal_subject(p);
    json_t *scopes = json_array();
    for (size_t i = 0; i < canal_principal_scope_count(p); i++) {
        canal_str_t sc = canal_principal_scope_at(p, i);
        json_array_append_new(scopes, json_stringn(sc.base, sc.len));
    }
    return canal_res_json_new(req, 200, json_pack("{s:s%, s:o}", "sub", sub.base, sub.len, "scopes", scopes));
}

static int key(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "key accepted\n");
}

static int basic(canal_req_t *req, void *data)
{
    canal_str_t user = canal_principal_subject(canal_req_principal(req));
    return canal_res_json_new(req, 200, json_pack("{s:s%}", "user", user.base, user.len));
}

int secure_router_mode(canal_app_t *app, const secure_t *s, canal_error_info_t *err)
{
    /* Policies must outlive the app: static, filled once from the schemes main() made. */
    static canal_policy_t anyone, bearer, hs_only, admin, api_key, basic_auth;
    anyone = (canal_policy_t){.anonymous = 1};
    bearer = (canal_policy_t){.schemes = {s->jwt}};
    hs_only = (canal_policy_t){.schemes = {s->jwt_hs}};
    admin = (canal_policy_t){.schemes = {s->jwt}, .scopes = "admin"};
    api_key = (canal_policy_t){.schemes = {s->api_key}};
    basic_auth = (canal_policy_t){.schemes = {s->basic}};
    const canal_endpoint_spec_t routes[] = {
        {.tmpl = "/public", .handler = public, .options = {CANAL_POLICY(&anyone)}},
        {.tmpl = "/me", .handler = me, .options = {CANAL_POLICY(&bearer)}},
        {.tmpl = "/hs/me", .handler = me, .options = {CANAL_POLICY(&hs_only)}},
        {.tmpl = "/admin", .handler = me, .options = {CANAL_POLICY(&admin)}},
        {.tmpl = "/key", .handler = key, .options = {CANAL_POLICY(&api_key)}},
        {.tmpl = "/basic", .handler = basic, .options = {CANAL_POLICY(&basic_auth)}},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        int rc = canal_app_route(app, &routes[i], NULL, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}
