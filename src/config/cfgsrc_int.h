/* SPDX-License-Identifier: Apache-2.0 */
/* What cfgsrc.c and cfgsrc_expr.c share. Private to config/. */
#ifndef OUTBOXD_CONFIG_CFGSRC_INT_H
#define OUTBOXD_CONFIG_CFGSRC_INT_H

#include "outboxd/util/kv.h"

/* The value of @name in @envp (NAME=value strings, NULL-terminated; NULL: none), or NULL. */
const char *cfgsrc_env_get(char *const *envp, const char *name);

/*
 * cfgsrc_expr_expand() - every value of @raw (a Debezium Server file's keys as written) with its
 * property expressions expanded against the environment @envp and @raw itself, as Debezium
 * Server's SmallRye Config does. Return: 0, or -EINVAL with the key, its origin and why in
 * @errbuf (an expression with no value and no default, a loop, references that multiply).
 */
int cfgsrc_expr_expand(struct kv *raw, char *const *envp, char *errbuf, size_t errlen);

#endif
