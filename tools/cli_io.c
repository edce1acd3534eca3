// SPDX-License-Identifier: MIT
/*
 * File input and atomic file output for the CLI.  Inputs must have exactly
 * the size their options imply: a short or long file is almost always the
 * wrong file or the wrong shape, and guessing would hide it.  Outputs go to
 * a temporary file in the destination's directory (so rename() is atomic)
 * and replace the destination only after the whole command succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_in_open(struct cli_in *in, const char *opt, const char *path,
		size_t size, const char *what)
{
	struct stat st;

	in->opt = opt;
	in->path = path;
	in->what = what;
	in->size = size;
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		cli_error("--%s %s: cannot open: %s", opt, path,
			  strerror(errno));
		return -1;
	}
	if (fstat(in->fd, &st)) {
		cli_error("--%s %s: cannot stat: %s", opt, path,
			  strerror(errno));
		goto err_close;
	}
	if (S_ISDIR(st.st_mode)) {
		cli_error("--%s %s: is a directory, expected a file of %zu bytes (%s)",
			  opt, path, size, what);
		goto err_close;
	}
	/* Regular files are judged before any memory is committed. */
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size != size) {
		cli_error("--%s %s: file is %jd bytes, expected %zu (%s)",
			  opt, path, (intmax_t)st.st_size, size, what);
		goto err_close;
	}
	return 0;
err_close:
	close(in->fd);
	in->fd = -1;
	return -1;
}

int cli_in_read(struct cli_in *in, void *dst)
{
	size_t got = 0;
	ssize_t n;
	char extra;

	/* Pipes and devices have no size up front: count what arrives. */
	while (got < in->size) {
		n = read(in->fd, (char *)dst + got, in->size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("--%s %s: read error: %s", in->opt, in->path,
				  strerror(errno));
			return -1;
		}
		if (!n)
			break;
		got += n;
	}
	if (got < in->size) {
		cli_error("--%s %s: file is %zu bytes, expected %zu (%s)",
			  in->opt, in->path, got, in->size, in->what);
		return -1;
	}
	do {
		n = read(in->fd, &extra, 1);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		cli_error("--%s %s: file is longer than the expected %zu bytes (%s)",
			  in->opt, in->path, in->size, in->what);
		return -1;
	}
	return 0;
}

void cli_in_close(struct cli_in *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}

/* "dir/name" -> "dir/.name.<pid>.<n>.tmp" */
static char *temp_name(const char *path, unsigned int attempt)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	char *tmp;

	if (asprintf(&tmp, "%.*s.%s.%ld.%u.tmp", dirlen, path, base,
		     (long)getpid(), attempt) < 0)
		return NULL;
	return tmp;
}

int cli_out_open(struct cli_out *out, const char *opt, const char *path)
{
	const char *slash = strrchr(path, '/');
	unsigned int attempt;
	struct stat st;

	out->opt = opt;
	out->path = path;
	out->tmp = NULL;
	out->fd = -1;
	out->done = false;

	if ((slash && !slash[1]) || (!stat(path, &st) && S_ISDIR(st.st_mode))) {
		cli_error("--%s %s: is a directory, expected a file name", opt,
			  path);
		return -1;
	}
	for (attempt = 0; attempt < 100; attempt++) {
		out->tmp = temp_name(path, attempt);
		if (!out->tmp) {
			cli_error("--%s %s: out of memory", opt, path);
			return -1;
		}
		/*
		 * O_EXCL: never clobber someone else's file; 0666 & umask
		 * gives the result the permissions a plain create would.
		 */
		out->fd = open(out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			       0666);
		if (out->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
		free(out->tmp);
		out->tmp = NULL;
	}
	cli_error("--%s %s: cannot create a file in its directory: %s", opt,
		  path, strerror(errno));
	free(out->tmp);
	out->tmp = NULL;
	return -1;
}

int cli_out_write(struct cli_out *out, const void *data, size_t size)
{
	const char *p = data;
	ssize_t n;

	while (size) {
		n = write(out->fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("--%s %s: write error: %s", out->opt,
				  out->path, strerror(errno));
			return -1;
		}
		p += n;
		size -= n;
	}
	return 0;
}

int cli_out_commit(struct cli_out *outs, unsigned int n)
{
	unsigned int i;

	/* close() is where delayed write errors (NFS, quota) show up. */
	for (i = 0; i < n; i++) {
		if (close(outs[i].fd)) {
			outs[i].fd = -1;
			cli_error("--%s %s: write error: %s", outs[i].opt,
				  outs[i].path, strerror(errno));
			return -1;
		}
		outs[i].fd = -1;
	}
	for (i = 0; i < n; i++) {
		if (rename(outs[i].tmp, outs[i].path)) {
			cli_error("--%s %s: cannot rename %s into place: %s",
				  outs[i].opt, outs[i].path, outs[i].tmp,
				  strerror(errno));
			goto undo;
		}
		outs[i].done = true;
	}
	return 0;
undo:
	/* Half of a quantized pair is worse than none. */
	while (i--) {
		unlink(outs[i].path);
		outs[i].done = false;
	}
	return -1;
}

void cli_out_discard(struct cli_out *out)
{
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
	if (out->tmp && !out->done)
		unlink(out->tmp);
	free(out->tmp);
	out->tmp = NULL;
}
