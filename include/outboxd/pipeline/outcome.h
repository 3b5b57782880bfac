/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_OUTCOME_H
#define OUTBOXD_PIPELINE_OUTCOME_H

/*
 * What a step of a running relay asks for next, from a row's publication up to a whole
 * session (DESIGN.md "Failure handling"). Every step that can fail returns one and writes the
 * reason into the caller's text buffer.
 */
enum outcome {
	OUTCOME_OK,	      /* go on */
	OUTCOME_STOP,	      /* a signal: flush, confirm, exit 0 */
	OUTCOME_RESTART,      /* transient: start over from the slot after a backoff */
	OUTCOME_HALT,	      /* a poison row or an unexpected stream: exit 1 */
	OUTCOME_PRECONDITION, /* slot, publication, role, authentication: exit 2 */
};

#endif
