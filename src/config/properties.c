/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/config/properties.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

/*
 * The algorithm follows java.util.Properties (JDK 17): a line reader that joins continued lines
 * and drops comments, then a split of each logical line into key and value, then unescaping of
 * each part. Comments are only recognised at the start of a logical line, so a continued line
 * starting with '#' is content.
 */

struct reader {
	const char *p;
	const char *end;
	int line;     /* natural line number of the next byte, 1-based */
	bool skip_lf; /* the last byte read was a '\r' ending a line: skip one '\n' */
};

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

/* Next byte, counting lines; -1 at the end. A "\r\n" pair counts once. */
static int
next_byte(struct reader *r)
{
	char c;

	if (r->p == r->end) {
		return -1;
	}
	c = *r->p++;
	if (c == '\n' || (c == '\r' && (r->p == r->end || *r->p != '\n'))) {
		r->line++;
	}
	return (unsigned char)c;
}

/* Skip the rest of a comment line, including its terminator. */
static void
skip_comment(struct reader *r)
{
	int c;

	while ((c = next_byte(r)) >= 0) {
		if (c == '\n') {
			return;
		}
		if (c == '\r') {
			r->skip_lf = true;
			return;
		}
	}
}

/*
 * Read one logical line into @out (backslash-newline joined, leading whitespace of each
 * continued line dropped). Return false at the end of input.
 */
static bool
read_line(struct reader *r, struct buf *out, int *ret_line)
{
	bool skip_ws = true, appended = false, backslash = false;
	int c;

	buf_reset(out);
	for (;;) {
		c = next_byte(r);
		if (c < 0) {
			if (out->len == 0) {
				return false;
			}
			if (backslash) {
				out->data[--out->len] = '\0';
			}
			return true;
		}
		if (r->skip_lf) {
			r->skip_lf = false;
			if (c == '\n') {
				continue;
			}
		}
		if (skip_ws) {
			if (is_ws((char)c) || (!appended && (c == '\r' || c == '\n'))) {
				continue;
			}
			skip_ws = false;
			appended = false;
		}
		if (out->len == 0 && (c == '#' || c == '!')) {
			skip_comment(r);
			skip_ws = true;
			continue;
		}
		if (c != '\n' && c != '\r') {
			if (out->len == 0) {
				*ret_line = r->line;
			}
			buf_add_char(out, (char)c);
			backslash = c == '\\' ? !backslash : false;
			continue;
		}
		if (c == '\r') {
			r->skip_lf = true;
		}
		if (out->len == 0) {
			skip_ws = true;
			continue;
		}
		if (!backslash) {
			return true;
		}
		out->data[--out->len] = '\0';
		skip_ws = true;
		appended = true;
		backslash = false;
	}
}

/*
 * Unescape [s, end) into @out: \uHHHH (a surrogate pair becomes one code point; a lone
 * surrogate U+FFFD), \t \n \r \f, and "\x" -> "x" for any other x.
 */
static int
unescape(const char *s, const char *end, struct buf *out)
{
	while (s < end) {
		uint32_t u;
		int n;

		if (*s != '\\' || s + 1 == end) {
			buf_add_char(out, *s++);
			continue;
		}
		s++;
		switch (*s) {
		case 't':
			buf_add_char(out, '\t');
			s++;
			continue;
		case 'n':
			buf_add_char(out, '\n');
			s++;
			continue;
		case 'r':
			buf_add_char(out, '\r');
			s++;
			continue;
		case 'f':
			buf_add_char(out, '\f');
			s++;
			continue;
		case 'u': break;
		default: buf_add_char(out, *s++); continue;
		}
		n = utf8_uescape(s + 1, end, &u);
		if (n < 0) {
			return -EINVAL;
		}
		if (u == 0) {
			return -EDOM;
		}
		s += 1 + n;
		if (utf8_is_surrogate(u)) {
			u = 0xFFFD; /* a lone surrogate has no UTF-8 form */
		}
		utf8_put(out, u);
	}
	return 0;
}

/* Split a logical line into key and value the way Properties.load0 does, and unescape both. */
static int
split_line(const char *line, size_t len, struct buf *key, struct buf *value)
{
	size_t key_len = 0, value_start = len;
	bool has_sep = false, backslash = false;
	int r;

	for (; key_len < len; key_len++) {
		char c = line[key_len];

		if ((c == '=' || c == ':') && !backslash) {
			value_start = key_len + 1;
			has_sep = true;
			break;
		}
		if (is_ws(c) && !backslash) {
			value_start = key_len + 1;
			break;
		}
		backslash = c == '\\' ? !backslash : false;
	}
	for (; value_start < len; value_start++) {
		char c = line[value_start];

		if (!is_ws(c)) {
			if (has_sep || (c != '=' && c != ':')) {
				break;
			}
			has_sep = true;
		}
	}
	buf_reset(key);
	buf_reset(value);
	r = unescape(line, line + key_len, key);
	if (r == 0) {
		r = unescape(line + value_start, line + len, value);
	}
	return r;
}

int
properties_parse(const char *text, size_t len, const char *name, struct kv *ret, char *errbuf,
		 size_t errlen)
{
	struct reader r = { text, text + len, 1, false };
	struct buf line = BUF_INIT, key = BUF_INIT, value = BUF_INIT, origin = BUF_INIT;
	struct kv out = KV_INIT;
	int line_no = 1, err = 0;

	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		r.p += 3; /* a UTF-8 byte order mark is not part of the first key */
	}
	while (read_line(&r, &line, &line_no)) {
		err = split_line(line.data, line.len, &key, &value);
		if (err) {
			errbuf_set(errbuf, errlen, "%s:%d: %s", name, line_no,
				   err == -EDOM ? "\\u0000 is not supported in a key or value" :
						  "malformed \\uxxxx escape");
			err = -EINVAL;
			break;
		}
		buf_reset(&origin);
		buf_add_fmt(&origin, "%s:%d", name, line_no);
		kv_set(&out, buf_cstr(&key), buf_cstr(&value), buf_cstr(&origin));
	}
	buf_fini(&line);
	buf_fini(&key);
	buf_fini(&value);
	buf_fini(&origin);
	if (err) {
		kv_fini(&out);
		return err;
	}
	*ret = out;
	return 0;
}

int
properties_read_file(const char *path, char **ret_text, size_t *ret_len, char *errbuf,
		     size_t errlen)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	FILE *f = fopen(path, "rb");
	size_t n;
	int err;

	if (!f) {
		err = errno;
		errbuf_set(errbuf, errlen, "%s: %s", path, strerror(err));
		return -err;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf_add(&b, chunk, n);
	}
	err = ferror(f) ? EIO : 0;
	fclose(f);
	if (err) {
		errbuf_set(errbuf, errlen, "%s: %s", path, strerror(err));
		buf_fini(&b);
		return -err;
	}
	*ret_len = b.len;
	*ret_text = buf_steal(&b);
	return 0;
}

int
properties_load(const char *path, struct kv *ret, char *errbuf, size_t errlen)
{
	char *text;
	size_t len;
	int r;

	r = properties_read_file(path, &text, &len, errbuf, errlen);
	if (r) {
		return r;
	}
	r = properties_parse(text, len, path, ret, errbuf, errlen);
	free(text);
	return r;
}
