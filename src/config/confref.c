/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The configuration reference, rendered as Markdown (docs/configuration.md) or as a man page
 * (outboxd.conf.5) from one sequence of headings, paragraphs and tables, so the two never say
 * different things. The tables come from the key tables (config_keys.c), the refusals
 * (config_refusals.c), the vocabulary (vocab_data.c, vocab.c) and, for every key outboxd does not
 * define itself, the probe (confref_probe.c): what the loader does with it.
 */
#include "outboxd/config/confref.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"
#include "confref_int.h"
#include "outboxd/config/vocab.h"
#include "outboxd/util/mem.h"

struct doc {
	enum confref_format fmt;
	struct buf *out;
	const char *const *cols; /* the current table's headers */
	size_t ncols;
};

/* Inline Markdown (`code`, [text](link)) as roff: code bold, links as their text. */
static void
man_inline(struct buf *out, const char *s)
{
	bool code = false;

	if (*s == '.' || *s == '\'') {
		buf_add_str(out, "\\&");
	}
	for (const char *p = s; *p; p++) {
		const char *close;

		if (*p == '`') {
			buf_add_str(out, code ? "\\fR" : "\\fB");
			code = !code;
		} else if (*p == '\\') {
			buf_add_str(out, "\\e");
		} else if (*p == '-' && code) {
			buf_add_str(out, "\\-");
		} else if (!code && *p == '[' && (close = strstr(p, "](")) && strchr(close, ')')) {
			buf_add(out, p + 1, (size_t)(close - p - 1));
			p = strchr(close, ')');
		} else {
			buf_add_char(out, *p);
		}
	}
}

static void
heading(struct doc *d, int level, const char *text)
{
	if (d->fmt == CONFREF_MARKDOWN) {
		buf_add_fmt(d->out, "%.*s %s\n\n", level, "###", text);
		return;
	}
	buf_add_str(d->out, level <= 2 ? ".SH " : ".SS ");
	man_inline(d->out, text);
	buf_add_char(d->out, '\n');
}

static void
para(struct doc *d, const char *text)
{
	if (d->fmt == CONFREF_MARKDOWN) {
		buf_add_fmt(d->out, "%s\n\n", text);
		return;
	}
	buf_add_str(d->out, ".PP\n");
	man_inline(d->out, text);
	buf_add_char(d->out, '\n');
}

static void
table(struct doc *d, const char *const *cols, size_t ncols)
{
	d->cols = cols;
	d->ncols = ncols;
	if (d->fmt != CONFREF_MARKDOWN) {
		return;
	}
	for (size_t i = 0; i < ncols; i++) {
		buf_add_fmt(d->out, "| %s ", cols[i]);
	}
	buf_add_str(d->out, "|\n");
	for (size_t i = 0; i < ncols; i++) {
		buf_add_str(d->out, "|---");
	}
	buf_add_str(d->out, "|\n");
}

static void
md_cell(struct buf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '|') {
			buf_add_char(out, '\\');
		}
		buf_add_char(out, *p);
	}
}

/* A row: Markdown as is; roff as a tagged paragraph, the other cells labelled by header. */
static void
row(struct doc *d, const char *const *cells)
{
	if (d->fmt == CONFREF_MARKDOWN) {
		for (size_t i = 0; i < d->ncols; i++) {
			buf_add_str(d->out, "| ");
			md_cell(d->out, cells[i]);
			buf_add_char(d->out, ' ');
		}
		buf_add_str(d->out, "|\n");
		return;
	}
	buf_add_str(d->out, ".TP\n");
	man_inline(d->out, cells[0]);
	buf_add_char(d->out, '\n');
	for (size_t i = 1; i < d->ncols; i++) {
		if (!cells[i][0]) {
			continue;
		}
		if (i + 1 < d->ncols) {
			buf_add_fmt(d->out, "%s: ", d->cols[i]);
		}
		man_inline(d->out, cells[i]);
		buf_add_str(d->out, i + 1 < d->ncols ? ";\n" : "\n");
	}
}

static void
end_table(struct doc *d)
{
	if (d->fmt == CONFREF_MARKDOWN) {
		buf_add_char(d->out, '\n');
	}
}

static const char *
type_name(enum cf_type t)
{
	switch (t) {
	case CF_INT: return "integer";
	case CF_BOOL: return "boolean";
	case CF_ENUM: return "one of";
	default: return "string";
	}
}

/* The rows of @keys whose name starts with @prefix (NULL: all), minus @skip's. */
static void
key_table(struct doc *d, const struct cf_key *keys, size_t n, const char *prefix, const char *skip)
{
	static const char *const cols[] = { "key", "type", "default", "range", "meaning" };

	table(d, cols, 5);
	for (size_t i = 0; i < n; i++) {
		const struct cf_key *k = &keys[i];
		struct buf name = BUF_INIT, def = BUF_INIT, range = BUF_INIT;

		if ((prefix && strncmp(k->name, prefix, strlen(prefix)) != 0) ||
		    (skip && strncmp(k->name, skip, strlen(skip)) == 0)) {
			continue;
		}
		buf_add_fmt(&name, "`%s`", k->name);
		buf_add_fmt(&def, k->def ? "`%s`" : "none", k->def ? k->def : "");
		if (k->type == CF_INT) {
			buf_add_fmt(&range, "%" PRId64 "-%" PRId64, k->min, k->max);
		} else if (k->type == CF_ENUM) {
			for (const char *p = k->extra; *p;) {
				size_t w = strcspn(p, "|");

				buf_add_fmt(&range, "%s`%.*s`", range.len ? ", " : "", (int)w, p);
				p += w + (p[w] == '|');
			}
		}
		row(d, (const char *const[]){ buf_cstr(&name), type_name(k->type), buf_cstr(&def),
					      buf_cstr(&range), k->doc });
		buf_fini(&name);
		buf_fini(&def);
		buf_fini(&range);
	}
	end_table(d);
}

/* A vocabulary name as users read it ("column.truncate.to.<n>.chars") and as it is probed. */
static void
names(const char *pat, struct buf *shown, struct buf *probe)
{
	static const char *const parts[][3] = { { "(d+)", "<n>", "1" },
						{ "([^.]+)", "<name>", "x" },
						{ "(.+)", "<value>", "x" } };

	for (const char *p = pat; *p;) {
		size_t i;

		for (i = 0; i < 3; i++) {
			if (strncmp(p, parts[i][0], strlen(parts[i][0])) == 0) {
				break;
			}
		}
		if (i < 3) {
			buf_add_str(shown, parts[i][1]);
			buf_add_str(probe, parts[i][2]);
			p += strlen(parts[i][0]);
		} else {
			buf_add_char(shown, *p);
			buf_add_char(probe, *p++);
		}
	}
}

static bool
in_table(const struct cf_key *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(keys[i].name, name) == 0) {
			return true;
		}
	}
	return false;
}

static const char *const class_name[] = {
	[CONFREF_HONOURED] = "honoured",
	[CONFREF_IGNORED] = "accepted without effect",
	[CONFREF_REFUSED] = "refused",
};

/* Every key of @groups (and none of @not) probed at @place: key, class, note. */
static void
probe_table(struct doc *d, unsigned groups, unsigned not, enum confref_place place,
	    const char *prefix)
{
	static const char *const cols[] = { "key", "class", "what outboxd does" };

	table(d, cols, 3);
	for (size_t i = 0; i < vocab_data_len; i++) {
		const struct vocab_entry *v = &vocab_data[i];
		struct buf shown = BUF_INIT, probe = BUF_INIT, name = BUF_INIT, note = BUF_INIT;
		struct confref_probe p;

		if (!(v->groups & groups) || (v->groups & not ) ||
		    in_table(config_connector_keys, config_nconnector_keys, v->key)) {
			continue;
		}
		names(v->key, &shown, &probe);
		if (confref_probe(buf_cstr(&probe), place, &p) == 0) {
			buf_add_fmt(&name, "`%s%s`", prefix, buf_cstr(&shown));
			if (p.rdkafka) {
				buf_add_str(&note, "librdkafka's ");
				for (const char *r = p.rdkafka; *r;) {
					size_t w = strcspn(r, ",");

					buf_add_fmt(&note, "`%.*s`", (int)w, r);
					r += w;
					r += strspn(r, ", ");
					buf_add_str(&note, *r ? ", " : "");
				}
			} else if (p.note) {
				buf_add_str(&note, p.note);
			}
			row(d, (const char *const[]){ buf_cstr(&name), class_name[p.cls],
						      buf_cstr(&note) });
		}
		confref_probe_fini(&p);
		buf_fini(&shown);
		buf_fini(&probe);
		buf_fini(&name);
		buf_fini(&note);
	}
	end_table(d);
}

/*
 * The families of a Debezium Server file's own keys: as users read them, the key probed for
 * the family, and a note where the probed key's own would mislead (NULL: the probe's).
 */
static const char *const server_keys[][3] = {
	{ "debezium.sink.type", "debezium.sink.type", "`kafka`; any other sink is refused" },
	{ "debezium.sink.kafka.producer.<key>", "debezium.sink.kafka.producer.linger.ms",
	  "as the [Kafka producer settings](#kafka-producer-settings)" },
	{ "debezium.sink.kafka.wait.message.delivery.timeout.ms",
	  "debezium.sink.kafka.wait.message.delivery.timeout.ms", NULL },
	{ "debezium.sink.kafka.<other>", "debezium.sink.kafka.frobnicate", NULL },
	{ "debezium.sink.<other sink>.<key>", "debezium.sink.pubsub.project.id", NULL },
	{ "debezium.format.key", "debezium.format.key", NULL },
	{ "debezium.format.value", "debezium.format.value", NULL },
	{ "debezium.format.header", "debezium.format.header", NULL },
	{ "debezium.format.<option>", "debezium.format.schemas.enable",
	  "an option of the three converters, as in the [converter settings](#converter-settings)" },
	{ "debezium.format.value.<option>", "debezium.format.value.schemas.enable",
	  "an option of one converter (also `key.`, `header.`)" },
	{ "debezium.api.enabled", "debezium.api.enabled", NULL },
	{ "quarkus.<key>", "quarkus.log.level", NULL },
	{ "mp.<key>", "mp.messaging.x", NULL },
	{ "smallrye.<key>", "smallrye.config.x", NULL },
};

static void
server_table(struct doc *d)
{
	static const char *const cols[] = { "key", "class", "what outboxd does" };

	table(d, cols, 3);
	for (size_t i = 0; i < sizeof(server_keys) / sizeof(server_keys[0]); i++) {
		struct buf name = BUF_INIT;
		struct confref_probe p;

		if (confref_probe(server_keys[i][1], CONFREF_SERVER, &p) == 0) {
			buf_add_fmt(&name, "`%s`", server_keys[i][0]);
			row(d, (const char *const[]){ buf_cstr(&name), class_name[p.cls],
						      server_keys[i][2] ? server_keys[i][2] :
						      p.note		? p.note :
									  "" });
		}
		confref_probe_fini(&p);
		buf_fini(&name);
	}
	end_table(d);
}

/* config_refusals' rows refused for one value; config_notes' rows. */
static void
refusal_table(struct doc *d, const struct refusal *r, size_t n, bool valued,
	      const char *const *cols)
{
	table(d, cols, valued ? 3 : 2);
	for (size_t i = 0; i < n; i++) {
		struct buf key = BUF_INIT, val = BUF_INIT;

		if (valued != (r[i].value != NULL)) {
			continue;
		}
		buf_add_fmt(&key, "`%s`", r[i].key);
		if (valued) {
			buf_add_fmt(&val, "`%s`", r[i].value);
			row(d, (const char *const[]){ buf_cstr(&key), buf_cstr(&val), r[i].why });
		} else {
			row(d, (const char *const[]){ buf_cstr(&key), r[i].why });
		}
		buf_fini(&key);
		buf_fini(&val);
	}
	end_table(d);
}

/* The prose around the tables: the same words in both formats. */
static const char text_md_head[] =
	"# Configuration reference\n\n"
	"<!-- Generated from the loader's own tables by build/outboxd-confref (tools/confref.c); do not\n"
	"     edit. `ninja -C build confref` rewrites it; the unit test `confref` fails when it differs. -->\n\n";
static const char text_man_head[] =
	".TH OUTBOXD.CONF 5 \"\" \"outboxd\" \"File formats\"\n"
	".SH NAME\n"
	"outboxd.conf \\- the settings outboxd reads from Kafka Connect, connector and Debezium Server files\n"
	".SH DESCRIPTION\n";
static const char text_intro[] =
	"outboxd reads the files a Debezium user already has: a Kafka Connect worker file and a "
	"connector file (`.properties`, connector JSON or a Strimzi KafkaConnector), or one Debezium "
	"Server `application.properties` (where `debezium.source.*` are the connector's keys, "
	"`debezium.sink.kafka.producer.*` the producer's and `debezium.transforms.*` the transforms'). "
	"Every key is in one of four classes: honoured (it acts as in Debezium), accepted without "
	"effect (listed once at start-up with the reason), refused (exit 2 with "
	"`file:line: key: reason; fix`), or unknown (exit 2: a typo). This reference lists outboxd's "
	"own keys and the Debezium keys it honours with their type, default, range and meaning, then "
	"the class of every other key of Kafka Connect 4.3.0 and Debezium 3.6.1, as the loader "
	"classifies it. How the files are found and combined: [Running outboxd](running.md).";
static const char text_outboxd[] =
	"outboxd's own keys may be written in any of the files, or set in the environment as "
	"`OUTBOXD_<KEY>` (`OUTBOXD_SLOT_CREATE=true` is `outboxd.slot.create=true`; the environment "
	"wins). A number outside its range, or not an integer, is exit 2 naming the key and the range.";
static const char text_poll[] =
	"Read by `outboxd poll` only (see [the polling publisher](polling.md)).";
static const char text_connector[] =
	"The keys of Debezium's PostgreSQL connector that outboxd honours, with Debezium's names and "
	"defaults (a Debezium Server file writes them as `debezium.source.<key>`).";
static const char text_connector_rest[] =
	"The connector's other keys (and Kafka Connect's own per-connector keys), and what outboxd "
	"does with each:";
static const char text_jdbc[] =
	"`database.<property>` passes a property to PostgreSQL's JDBC driver in Debezium; outboxd "
	"speaks libpq:";
static const char text_producer[] =
	"Java producer settings, as `producer.<key>` in the worker file, "
	"`producer.override.<key>` in the connector file, or `debezium.sink.kafka.producer.<key>` "
	"in a Debezium Server file, are translated to librdkafka's (the settings named below); a "
	"key outboxd has no rule for passes to librdkafka under its own name, which refuses what it "
	"does not know (see [Producer settings](running.md#producer-settings)).";
static const char text_worker[] = "The Kafka Connect worker file's own keys:";
static const char text_smt[] =
	"The options of the outbox `EventRouter` (`transforms.<alias>.<option>`; other "
	"transforms are refused):";
static const char text_converter[] =
	"The options of the key and value converters (`key.converter.<option>`, "
	"`value.converter.<option>`), then of the header converter:";
static const char text_server[] =
	"A Debezium Server `application.properties` holds the connector's keys as "
	"`debezium.source.<key>` (read as in the sections above), the transforms as "
	"`debezium.transforms.*`, and keys of its own:";
static const char text_engine[] =
	"And the keys of Debezium's embedded engine, which Debezium Server runs the connector in "
	"(`debezium.source.<key>`):";
static const char text_refused[] =
	"A refused key stops outboxd at start (and `outboxd check`) with exit 2, the file and line, "
	"the reason and the fix: it asks for something outboxd cannot do, and running without it "
	"would not be what the user asked for. The keys refused whatever their value are marked in "
	"the tables above; these are refused for one value:";
static const char text_refused_worker[] = "And in the worker file:";
static const char text_ignored[] =
	"A key accepted without effect is listed once at start-up (`accepted without effect: key "
	"(reason)`) and in `outboxd check`; the tables above give each one's reason. Some have a note "
	"of their own (a trailing `*` is a prefix):";

/* The tables of probed keys, in the page's order: a heading (or none: the same section goes on). */
struct probed {
	int level;
	const char *title, *text;
	unsigned groups, not ;
	enum confref_place place;
	const char *prefix;
};

static const struct probed probed[] = {
	{ 0, NULL, NULL, VOCAB_CONNECTOR | VOCAB_CONNECT, VOCAB_JDBC, CONFREF_CONNECTOR, "" },
	{ 3, "JDBC driver properties", text_jdbc, VOCAB_JDBC, 0, CONFREF_CONNECTOR, "" },
	{ 2, "Kafka producer settings", text_producer, VOCAB_PRODUCER, 0, CONFREF_PRODUCER,
	  "producer." },
	{ 2, "Kafka Connect worker settings", text_worker, VOCAB_WORKER, VOCAB_PRODUCER,
	  CONFREF_WORKER, "" },
	{ 2, "EventRouter settings", text_smt, VOCAB_SMT, 0, CONFREF_SMT, "transforms.outbox." },
	{ 2, "Converter settings", text_converter, VOCAB_CONVERTER, 0, CONFREF_CONVERTER,
	  "value.converter." },
	{ 0, NULL, NULL, VOCAB_HEADER, 0, CONFREF_HEADER, "header.converter." },
};

void
confref_render(enum confref_format fmt, struct buf *out)
{
	struct doc d = { .fmt = fmt, .out = out };
	static const char *const refused_cols[] = { "key", "refused value", "why, and the fix" };
	static const char *const notes_cols[] = { "key", "why it has no effect" };

	if (fmt == CONFREF_MARKDOWN) {
		buf_add_str(out, text_md_head);
	} else {
		buf_add_str(out, text_man_head);
	}
	para(&d, text_intro);
	heading(&d, 2, "outboxd settings");
	para(&d, text_outboxd);
	key_table(&d, config_outboxd_keys, config_noutboxd_keys, NULL, "outboxd.poll.");
	heading(&d, 2, "Polling publisher settings");
	para(&d, text_poll);
	key_table(&d, config_outboxd_keys, config_noutboxd_keys, "outboxd.poll.", NULL);
	heading(&d, 2, "Debezium PostgreSQL connector settings");
	para(&d, text_connector);
	key_table(&d, config_connector_keys, config_nconnector_keys, NULL, NULL);
	para(&d, text_connector_rest);
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		const struct probed *p = &probed[i];

		if (p->title) {
			heading(&d, p->level, p->title);
			para(&d, p->text);
		}
		probe_table(&d, p->groups, p->not, p->place, p->prefix);
	}
	heading(&d, 2, "Debezium Server settings");
	para(&d, text_server);
	server_table(&d);
	para(&d, text_engine);
	probe_table(&d, VOCAB_ENGINE, 0, CONFREF_SOURCE, "debezium.source.");
	heading(&d, 2, "Refused settings");
	para(&d, text_refused);
	refusal_table(&d, config_refusals, config_nrefusals, true, refused_cols);
	para(&d, text_refused_worker);
	refusal_table(&d, config_worker_refusals, config_nworker_refusals, true, refused_cols);
	heading(&d, 2, "Accepted without effect");
	para(&d, text_ignored);
	refusal_table(&d, config_notes, config_nnotes, false, notes_cols);
	if (fmt == CONFREF_MAN) {
		buf_add_str(out, ".SH SEE ALSO\n\\fBoutboxd\\fR(1); docs/ in the source tree, "
				 "docs/configuration.md being this page.\n");
	}
}
