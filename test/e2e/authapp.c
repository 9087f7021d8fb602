/* SPDX-License-Identifier: MIT */
/*
 * canal-authapp: the authentication routes of issue 18's canal-secure contract, for
 * test/e2e/auth.sh, in router mode:
 *
 *   GET /public   none                 GET /me      Bearer JWT (HS256, RS256, ES256)
 *   GET /hs/me    Bearer JWT, HS256    GET /admin   Bearer JWT with scope admin
 *   GET /key      X-Api-Key            GET /basic   Basic for --basic-user
 *   POST /ctl/admin  a controller action with scope admin and a required JSON member n (int):
 *                 the policy answers before the binding looks at the body
 *   GET /plain/me  no policy: the JSON of /me for a fixed principal, the baseline of the cost
 *                 of a policy (instructions per request, docs/security.md)
 *   GET /openapi.json  the document (under the app's default policy: a Bearer JWT)
 *
 * Flags (beside canal's): --jwt-hs256-secret FILE --jwt-rs256-public-key FILE
 * --jwt-es256-public-key FILE --jwt-issuer S --jwt-audience S --api-key FILE
 * --basic-user U --basic-password FILE (required: the secret files, canal_secret_read()).
 */
#include <stdio.h>
#include <string.h>
#include <canal.h>

static int public(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "public");
}

static int me(canal_req_t *req, void *data)
{
    const canal_principal_t *p = canal_req_principal(req);
    canal_str_t sub = canal_principal_subject(p);
    json_t *scopes = json_array();
    for (size_t i = 0; i < canal_principal_scope_count(p); i++) {
        canal_str_t s = canal_principal_scope_at(p, i);
        json_array_append_new(scopes, json_stringn(s.base, s.len));
    }
    return canal_res_json_new(req, 200, json_pack("{s:s%, s:o}", "sub", sub.base, sub.len, "scopes", scopes));
}

typedef struct {
    int32_t n;
} admin_args_t;
static const canal_field_t admin_fields[] = {
    {.name = "n", CANAL_FIELD(admin_args_t, n), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED}, {.name = NULL}};
static const canal_schema_t admin_args = {.name = "AdminArgs", .size = sizeof(admin_args_t), .fields = admin_fields};

static int ctl_admin(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_json_new(req, 200, json_pack("{s:i}", "n", (int)((const admin_args_t *)args)->n));
}

static int plain_me(canal_req_t *req, void *data)
{
    return canal_res_json_new(req, 200, json_pack("{s:s, s:[s, s]}", "sub", "user-1", "scopes", "read", "admin"));
}

static int basic_ok(canal_req_t *req, void *data)
{
    canal_str_t u = canal_principal_subject(canal_req_principal(req));
    return canal_res_json_new(req, 200, json_pack("{s:s%}", "user", u.base, u.len));
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.threads = 2;
    cfg.allow_unknown_flags = 1;
    if (canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-authapp: %s\n", err.message);
        return 2;
    }
    const char *hs = NULL, *rs = NULL, *es = NULL, *iss = NULL, *aud = NULL, *key = NULL, *user = NULL, *pw = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--jwt-hs256-secret")) hs = v;
        else if (!strcmp(f, "--jwt-rs256-public-key")) rs = v;
        else if (!strcmp(f, "--jwt-es256-public-key")) es = v;
        else if (!strcmp(f, "--jwt-issuer")) iss = v;
        else if (!strcmp(f, "--jwt-audience")) aud = v;
        else if (!strcmp(f, "--api-key")) key = v;
        else if (!strcmp(f, "--basic-user")) user = v;
        else if (!strcmp(f, "--basic-password")) pw = v;
        else { fprintf(stderr, "canal-authapp: unknown flag %s\n", f); return 2; }
    }
    canal_str_t hsb = {NULL, 0}, keyb = {NULL, 0}, pwb = {NULL, 0};
    if (key == NULL || pw == NULL) {
        fprintf(stderr, "canal-authapp: --api-key and --basic-password are required\n");
        return 2;
    }
    if ((hs && canal_secret_read(hs, &hsb, &err)) || canal_secret_read(key, &keyb, &err) ||
        canal_secret_read(pw, &pwb, &err)) {
        fprintf(stderr, "canal-authapp: %s\n", err.message);
        return 2;
    }
    canal_jwt_config_t all = {.issuer = iss, .audience = aud, .leeway = 30}, hsonly = all;
    size_t k = 0;
    if (hs)
        all.keys[k++] = hsonly.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = hsb.base, .secret_len = hsb.len};
    if (rs)
        all.keys[k++] = (canal_jwt_key_t){.alg = CANAL_JWT_RS256, .pem_file = rs};
    if (es)
        all.keys[k++] = (canal_jwt_key_t){.alg = CANAL_JWT_ES256, .pem_file = es};
    canal_auth_t *jwt = canal_auth_jwt(&all, &err);
    if (jwt == NULL) { fprintf(stderr, "canal-authapp: %s\n", err.message); return 2; }
    canal_auth_t *jwt_hs = canal_auth_jwt(&hsonly, &err);
    if (jwt_hs == NULL) { fprintf(stderr, "canal-authapp: %s\n", err.message); return 2; }
    canal_auth_t *apikey = canal_auth_api_key(&(canal_api_key_config_t){.key = keyb.base, .key_len = keyb.len}, &err);
    if (apikey == NULL) { fprintf(stderr, "canal-authapp: %s\n", err.message); return 2; }
    canal_auth_t *basic = canal_auth_basic(&(canal_basic_config_t){.user = user, .password = pwb.base, .password_len = pwb.len}, &err);
    if (basic == NULL) { fprintf(stderr, "canal-authapp: %s\n", err.message); return 2; }

    const canal_policy_t p_jwt = {.schemes = {jwt}}, p_hs = {.schemes = {jwt_hs}},
                         p_admin = {.schemes = {jwt}, .scopes = "admin"}, p_key = {.schemes = {apikey}},
                         p_basic = {.schemes = {basic}}, p_open = {.anonymous = 1};
    const canal_action_def_t actions[] = {
        {.name = "Admin", .methods = "POST", .routes = {"/ctl/admin"}, .handler = ctl_admin,
         .args = &admin_args},
        {.name = NULL}};
    const canal_controller_def_t ctl = {.name = "Ctl", .actions = actions, .options = {CANAL_POLICY(&p_admin)}};
    canal_mvc_t *mvc = NULL;
    canal_app_t *app = canal_app_create(&cfg);
    int rc = app == NULL ||
             canal_app_policy(app, &p_jwt) != 0 || /* the default: /me below has none of its own */
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "public", .handler = public, .options = {CANAL_POLICY(&p_open)}}, NULL, &err) ||
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "me", .handler = me}, NULL, &err) ||
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "plain/me", .handler = plain_me, .options = {CANAL_POLICY(&p_open)}}, NULL, &err) ||
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "me", .handler = me, .group = canal_app_group(app, NULL, "hs"),
                                                           .options = {CANAL_POLICY(&p_hs)}}, NULL, &err) ||
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "admin", .handler = me, .options = {CANAL_POLICY(&p_admin)}}, NULL, &err) ||
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "key", .handler = public, .options = {CANAL_POLICY(&p_key)}}, NULL, &err) ||
             canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "basic", .handler = basic_ok, .options = {CANAL_POLICY(&p_basic)}}, NULL, &err) ||
             (mvc = canal_mvc_create(app)) == NULL ||
             canal_mvc_add_controller(mvc, &ctl, NULL, &err) != 0 ||
             canal_app_openapi(app, "openapi.json", canal_mvc_openapi(mvc, NULL), &err) != 0 ||
             canal_app_start(app) != 0;
    if (rc) {
        fprintf(stderr, "canal-authapp: cannot start: %s\n", err.message);
    } else {
        fprintf(stderr, "canal-authapp listening on http://%s:%u\n", cfg.host, canal_app_port(app, 0));
        rc = canal_app_wait(app) != 0;
    }
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    canal_auth_destroy(jwt);
    canal_auth_destroy(jwt_hs);
    canal_auth_destroy(apikey);
    canal_auth_destroy(basic);
    canal_secret_free(&hsb);
    canal_secret_free(&keyb);
    canal_secret_free(&pwb);
    return rc;
}
