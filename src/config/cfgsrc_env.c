/* SPDX-License-Identifier: Apache-2.0 */
/* The environment as Debezium Server's MicroProfile Config reads it (cfgsrc.h, cfgsrc_int.h). */
#include <ctype.h>
#include <string.h>

#include "cfgsrc_int.h"
#include "outboxd/config/cfgsrc.h"
#include "outboxd/util/mem.h"

char *
cfgsrc_env_name(const char *key)
{
	char *s = xstrdup(key);

	for (char *p = s; *p; p++) {
		*p = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
	}
	return s;
}

const char *
cfgsrc_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++) {
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=') {
			return *envp + n + 1;
		}
	}
	return NULL;
}
