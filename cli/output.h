/*
 * output: how `kubectl raygate` prints what cli/view.c derived, as pure
 * functions into a string buffer: kubectl-like tables (columns padded to their
 * widest cell, three spaces apart), the `why` text, JSON and YAML.
 */
#ifndef RAYGATE_CLI_OUTPUT_H
#define RAYGATE_CLI_OUTPUT_H

#include <jansson.h>

#include "util.h"

enum {
    OUTPUT_WIDE = 1 << 0,   /* more columns, the wait message in full */
    OUTPUT_COLOUR = 1 << 1, /* ANSI colours for states: only when printing to a terminal */
};

/* Longest WAITING FOR cell of a normal table, in characters; longer ones end with "…". */
#define OUTPUT_REASON_WIDTH 60

/*
 * Appends the gangs table of rows (borrowed, view_gangs') to b:
 *   NAMESPACE NAME KIND QUEUE PRIORITY STATE PODS POSITION WAITING FOR AGE
 * wide: NAMESPACE NAME KIND QUEUE PRIORITY STATE PODS POSITION AGE PODGROUP
 * MIN RESOURCES REQUEUES WAITING FOR (the full message). Empty rows: the line
 * "No gangs found." instead.
 */
void output_gangs_table(struct util_buf *b, const json_t *rows, unsigned flags);

/*
 * Appends the queues table of rows (borrowed, view_queues') to b:
 *   NAME PARENT STATE CAPABILITY GUARANTEE DESERVED ALLOCATED SHARE RUNNING PENDING
 * (wide: also INQUEUE and WEIGHT). NAME is indented two spaces a level;
 * resource lists read "cpu=4,memory=6Gi", "-" when empty; a deserved derived
 * by weight ends with "*" ("0*" when empty). Under the table, the line
 * "* derived by weight" when a row has one, and "queue NAME: <treeError>"
 * for each row with a treeError.
 */
void output_queues_table(struct util_buf *b, const json_t *rows, unsigned flags);

/*
 * Appends the domains table of rows (borrowed, domains_view's) to b:
 *   DOMAIN [TIER] NODES <RESOURCE> FREE/ALLOC ... GANGS
 * (TIER for HyperNodes; a cell per resource reads "12/32", free/allocatable;
 * resources: the extended ones (nvidia.com/gpu first), cpu and memory, wide:
 * every one; GANGS cut like WAITING FOR, wide: in full). Under it,
 * "HyperNode NAME ignored: <error>" for each row with an error. No valid
 * row: the line "No domains found." instead of the table.
 */
void output_domains_table(struct util_buf *b, const json_t *rows, unsigned flags);

/*
 * Appends the table of what gangs ask for (rows borrowed, domains_asked's):
 *   ASKED FOR GANGS SHOW WITH
 * or, with no rows, a line saying no gang asks and how to show domains.
 */
void output_asked_table(struct util_buf *b, const json_t *rows, unsigned flags);

/* Appends the text of a why_explain() result (borrowed) to b. */
void output_why(struct util_buf *b, const json_t *why, unsigned flags);

/* Appends v (borrowed) as indented JSON with a final newline. */
void output_json(struct util_buf *b, const json_t *v);

/* Appends v (borrowed) as a YAML document (libyaml's emitter). Returns 0, or -1 if the emitter fails. */
int output_yaml(struct util_buf *b, const json_t *v);

#endif
