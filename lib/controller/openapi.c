/* SPDX-License-Identifier: MIT */
/*
 * The controller layer's OpenAPI document: canal_openapi_build() describes the routes (with
 * the args and responses each action registered them with), and this file's callback adds to
 * each operation of an action its names: tag and operationId (its summary and description came
 * with its routes, canal_endpoint_spec_t). Only public
 * APIs are used: the callback knows an action's operation by its route, which the action
 * lists (canal_action_route_at()).
 */
#include <stdio.h>
#include <string.h>
#include "controller_internal.h"

static int describe(json_t *op, const canal_route_t *route, const char *path, void *data)
{
    const canal_mvc_t *mvc = data;
    for (size_t i = 0; i < canal_mvc_controller_count(mvc); i++) {
        const canal_controller_t *c = canal_mvc_controller_at(mvc, i);
        for (size_t j = 0; j < canal_controller_action_count(c); j++) {
            const canal_action_t *a = canal_controller_action_at(c, j);
            for (size_t k = 0; k < canal_action_route_count(a); k++) {
                if (canal_action_route_at(a, k) != route)
                    continue;
                const canal_action_def_t *d = canal_action_def(a);
                char id[200];
                snprintf(id, sizeof(id), "%s_%s", canal_controller_name(c), d->name);
                json_object_set_new(op, "operationId", json_string(id));
                json_object_set_new(op, "tags", json_pack("[s]", canal_controller_name(c)));
                return 0;
            }
        }
    }
    return 0;
}

json_t *canal_mvc_openapi(const canal_mvc_t *mvc, const canal_openapi_info_t *info)
{
    return canal_openapi_build(mvc->app, info, describe, (void *)mvc);
}
