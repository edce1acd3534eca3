// SPDX-License-Identifier: MIT
/*
 * A small streaming JSON writer for `info --json` and `bench --json`.  The
 * strings it writes come from the library and the environment (reasons,
 * device descriptions), so everything is escaped; nothing here allocates.
 */
#include <math.h>
#include <stdio.h>

#include "cli.h"

void cli_json_init(struct cli_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			/* Bytes >= 0x80 pass through: the input is UTF-8. */
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Separator and key of the next member of the current container. */
static void member(struct cli_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key && j->depth) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

static void open_container(struct cli_json *j, const char *key, char open,
			   char close)
{
	member(j, key);
	fputc(open, j->f);
	/* Deeper nesting would be a programming error; stay well formed. */
	if (j->depth + 1 < CLI_JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
	j->close[j->depth] = close;
}

void cli_json_object(struct cli_json *j, const char *key)
{
	open_container(j, key, '{', '}');
}

void cli_json_array(struct cli_json *j, const char *key)
{
	open_container(j, key, '[', ']');
}

void cli_json_end(struct cli_json *j)
{
	if (!j->depth)
		return;
	fputc(j->close[j->depth], j->f);
	j->depth--;
	if (!j->depth) {
		fputc('\n', j->f);
		/* The next top-level value is a new document (JSON lines). */
		j->first[0] = true;
	}
}

void cli_json_str(struct cli_json *j, const char *key, const char *val)
{
	member(j, key);
	if (val)
		put_string(j->f, val);
	else
		fputs("null", j->f);
}

void cli_json_uint(struct cli_json *j, const char *key, uint64_t val)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)val);
}

void cli_json_bool(struct cli_json *j, const char *key, bool val)
{
	member(j, key);
	fputs(val ? "true" : "false", j->f);
}

void cli_json_double(struct cli_json *j, const char *key, double val)
{
	member(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.6g", val);
	else
		fputs("null", j->f);
}
