/* SPDX-License-Identifier: MIT */
/*
 * An app as its configuration describes it: the core's app (lib/core/app.c), then the
 * features the configuration switches on. The core names no feature, and a feature is
 * switched on by its own call; a setting of the configuration table that means "this feature,
 * on" (--access-log, --store) is read here, the one place above every feature (docs/architecture.md).
 */
#include "core/core.h"
#include "observability/observability.h"
#include "canal/redis.h"
#include "app/reload.h"

canal_app_t *canal_app_create(const canal_config_t *cfg)
{
    canal_app_t *app = canal__app_new(cfg);
    if (app == NULL)
        return NULL;
    const canal_config_t *c = canal_app_config(app);
    if (canal__reload_on(app) != 0) {
        canal_app_destroy(app);
        return NULL;
    }
    if (c->access_log != NULL && canal__acclog_on(app) != 0) {
        canal_app_destroy(app);
        return NULL;
    }
    canal_error_info_t err;
    if (c->store != NULL && canal_app_redis(app, c->store, NULL, &err) == NULL) {
        canal__log(app, CANAL_LOG_ERROR, "--store: %s", err.message);
        canal_app_destroy(app);
        return NULL;
    }
    return app;
}
