/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outboxd's command line: parses argv, wires the modules together and maps outcomes to exit
 * codes (0 clean stop, 1 runtime failure, 2 configuration or precondition error).
 */
#include <stdio.h>
#include <string.h>

#include "outboxd/version.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

static void
usage(FILE *out)
{
	fputs("usage: outboxd COMMAND [ARGS]\n"
	      "\n"
	      "Relays transactional-outbox rows from PostgreSQL logical replication to Kafka,\n"
	      "producing the records Debezium's outbox EventRouter produces.\n"
	      "\n"
	      "commands:\n"
	      "  version      print the version of outboxd and of its libraries\n"
	      "  --help       print this text\n"
	      "\n"
	      "exit codes: 0 clean stop, 1 runtime failure, 2 configuration or precondition error\n",
	      out);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		version_print(stdout);
		return EXIT_OK;
	}
	fprintf(stderr, "outboxd: unknown command \"%s\"; run \"outboxd --help\" for the list\n",
		argv[1]);
	return EXIT_USAGE;
}
