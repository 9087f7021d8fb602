/* SPDX-License-Identifier: MIT */
/*
 * The controller layer's view result, canal_ctx_view() (canal/view.h): an action returns a
 * page as it returns JSON. Public calls only, as everything in this layer.
 */
#include "canal/controller.h"
#include "canal/view.h"

int canal_ctx_view(canal_ctx_t *ctx, int status, const char *name, const canal_view_data_t *data)
{
    if (ctx == NULL)
        return CANAL_EINVAL;
    return canal_res_view(canal_ctx_req(ctx), status, name, data);
}
