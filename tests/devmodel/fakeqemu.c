// SPDX-License-Identifier: MIT
/*
 * The qemu side of ivshmem-doorbell (see fakeqemu.h).  The setup is read
 * the way qemu's hw/misc/ivshmem.c reads it: the version (0), our own id,
 * then -1 with the shared memory, then per peer one message per vector
 * with an eventfd; our own id's eventfds are our interrupt vectors.
 */
#include "fakeqemu.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t fq_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

const char *fq_devmodel_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("MXACCEL_DEVMODEL");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "mxaccel-devmodel";
	exe[n] = 0;
	/* $(BUILD)/tests/test_devmodel -> $(BUILD)/tools/mxaccel-devmodel */
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(path, sizeof(path), "%s/tools/mxaccel-devmodel", exe);
	return path;
}

static pid_t spawn(const char *const *argv, int err_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (err_fd >= 0) {
			dup2(err_fd, 2);
			dup2(err_fd, 1);
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

int fq_start(struct fq *q, const char *const *args)
{
	const char *argv[64];
	unsigned int n = 0, i;
	uint64_t until;
	struct stat st;
	int status;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	for (i = 0; i < FQ_MAX_VECTORS; i++)
		q->db[i] = q->vec[i] = -1;
	snprintf(q->dir, sizeof(q->dir), "/tmp/mxdm-XXXXXX");
	if (!mkdtemp(q->dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(q->sock, sizeof(q->sock), "%s/mxhw.sock", q->dir);
	snprintf(q->ctl, sizeof(q->ctl), "%s/control.sock", q->dir);
	snprintf(q->log, sizeof(q->log), "%s/devmodel.log", q->dir);
	argv[n++] = fq_devmodel_path();
	argv[n++] = "--socket";
	argv[n++] = q->sock;
	argv[n++] = "--control";
	argv[n++] = q->ctl;
	argv[n++] = "--log";
	argv[n++] = q->log;
	for (i = 0; args && args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	q->pid = spawn(argv, -1);
	if (q->pid < 0) {
		perror("fork");
		return -1;
	}
	until = fq_now_ms() + 5000;
	while (stat(q->sock, &st)) {
		if (waitpid(q->pid, &status, WNOHANG) == q->pid) {
			fprintf(stderr, "%s exited (status 0x%x) before its socket appeared\n",
				argv[0], status);
			q->pid = 0;
			return -1;
		}
		if (fq_now_ms() > until) {
			fprintf(stderr, "no socket %s after 5 s\n", q->sock);
			return -1;
		}
		usleep(2000);
	}
	if (!S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "%s is not a socket\n", q->sock);
		return -1;
	}
	return 0;
}

/* One message: the 8-byte value and the descriptor with it, or -1. */
static int recv_msg(int fd, int64_t *value, int *pass_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	uint8_t data[8];
	size_t got = 0;

	*pass_fd = -1;
	while (got < sizeof(data)) {
		struct iovec iov = { .iov_base = data + got,
				     .iov_len = sizeof(data) - got };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
		};
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct cmsghdr *c;
		ssize_t n;

		if (poll(&p, 1, 5000) != 1) {
			fprintf(stderr, "setup: no message within 5 s\n");
			return -1;
		}
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
		if (n <= 0) {
			fprintf(stderr, "setup: %s\n",
				n ? strerror(errno) : "EOF");
			return -1;
		}
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len == CMSG_LEN(sizeof(int))) {
				if (*pass_fd >= 0) {
					fprintf(stderr, "setup: two descriptors in one message\n");
					return -1;
				}
				memcpy(pass_fd, CMSG_DATA(c), sizeof(int));
			}
		got += (size_t)n;
	}
	memcpy(value, data, 8);
	*value = (int64_t)le64toh((uint64_t)*value);
	return 0;
}

int fq_connect(struct fq *q)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t v;
	unsigned int i, n;
	struct stat st;
	int fd;

	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", q->sock);
	if (q->fd < 0 || connect(q->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		return -1;
	}
	/* 1. the version, no descriptor */
	if (recv_msg(q->fd, &v, &fd))
		return -1;
	if (v != 0 || fd >= 0) {
		fprintf(stderr, "setup: first message %lld (fd %d), want version 0 without fd\n",
			(long long)v, fd);
		return -1;
	}
	/* 2. our id, no descriptor */
	if (recv_msg(q->fd, &v, &fd))
		return -1;
	if (v < 0 || v > 65535 || fd >= 0) {
		fprintf(stderr, "setup: second message %lld (fd %d), want our id without fd\n",
			(long long)v, fd);
		return -1;
	}
	q->my_id = v;
	/* 3. -1 and the shared memory */
	if (recv_msg(q->fd, &v, &fd))
		return -1;
	if (v != -1 || fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "setup: third message %lld (fd %d), want -1 with the shm fd\n",
			(long long)v, fd);
		return -1;
	}
	q->size = (size_t)st.st_size;
	q->bar = mmap(NULL, q->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (q->bar == MAP_FAILED) {
		perror("mmap BAR2");
		return -1;
	}
	q->hdr = (struct mxhw_header *)q->bar;
	if (le32toh(q->hdr->magic) != MXHW_MAGIC) {
		fprintf(stderr, "BAR2 magic 0x%x\n", le32toh(q->hdr->magic));
		return -1;
	}
	n = le32toh(q->hdr->n_irqs);
	if (n < 2 || n > FQ_MAX_VECTORS || n != le32toh(q->hdr->n_doorbells)) {
		fprintf(stderr, "header: n_irqs %u, n_doorbells %u\n", n,
			le32toh(q->hdr->n_doorbells));
		return -1;
	}
	q->n_vectors = n;	/* what our vectors= would be */
	/* 4. the device peer's doorbells, one message per vector */
	for (i = 0; i < n; i++) {
		if (recv_msg(q->fd, &v, &fd))
			return -1;
		if (v != le32toh(q->hdr->device_peer) || fd < 0) {
			fprintf(stderr, "setup: doorbell %u: message %lld (fd %d), want the device peer %u with an fd\n",
				i, (long long)v, fd,
				le32toh(q->hdr->device_peer));
			return -1;
		}
		q->db[i] = fd;
	}
	/* 5. our own vectors */
	for (i = 0; i < n; i++) {
		if (recv_msg(q->fd, &v, &fd))
			return -1;
		if (v != q->my_id || fd < 0) {
			fprintf(stderr, "setup: vector %u: message %lld (fd %d), want our id %lld with an fd\n",
				i, (long long)v, fd, (long long)q->my_id);
			return -1;
		}
		fcntl(fd, F_SETFL, O_NONBLOCK);
		q->vec[i] = fd;
	}
	q->ctrl = (struct mxhw_ctrl *)(q->bar + le64toh(q->hdr->ctrl_offset));
	q->test = q->hdr->test_offset ?
		  (struct mxhw_test *)(q->bar + le64toh(q->hdr->test_offset)) :
		  NULL;
	return 0;
}

static int wait_exit(struct fq *q, int timeout_ms)
{
	uint64_t until = fq_now_ms() + (uint64_t)timeout_ms;
	int status;

	if (q->pid <= 0)
		return -1;
	for (;;) {
		pid_t r = waitpid(q->pid, &status, WNOHANG);

		if (r == q->pid) {
			q->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		}
		if (fq_now_ms() > until) {
			kill(q->pid, SIGKILL);
			waitpid(q->pid, &status, 0);
			q->pid = 0;
			return -1;
		}
		usleep(2000);
	}
}

int fq_finish(struct fq *q, int timeout_ms)
{
	unsigned int i;

	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	for (i = 0; i < FQ_MAX_VECTORS; i++) {
		if (q->db[i] >= 0)
			close(q->db[i]);
		if (q->vec[i] >= 0)
			close(q->vec[i]);
		q->db[i] = q->vec[i] = -1;
	}
	if (q->bar && q->bar != MAP_FAILED)
		munmap(q->bar, q->size);
	q->bar = NULL;
	return wait_exit(q, timeout_ms);
}

int fq_signal(struct fq *q, int sig, int timeout_ms)
{
	if (q->pid <= 0)
		return -1;
	kill(q->pid, sig);
	return wait_exit(q, timeout_ms);
}

void fq_cleanup(struct fq *q)
{
	if (q->pid > 0)
		fq_finish(q, 3000);
	unlink(q->sock);
	unlink(q->ctl);
	unlink(q->log);
	if (q->dir[0])
		rmdir(q->dir);
}

void fq_doorbell(struct fq *q, unsigned int db)
{
	uint64_t one = 1;

	if (db < q->n_vectors && write(q->db[db], &one, sizeof(one)) < 0)
		perror("doorbell");
}

uint64_t fq_irq_take(struct fq *q, unsigned int vec)
{
	uint64_t v;

	if (vec >= q->n_vectors || read(q->vec[vec], &v, sizeof(v)) != 8)
		return 0;
	return v;
}

uint64_t fq_irq_wait(struct fq *q, unsigned int vec, int timeout_ms)
{
	struct pollfd p = { .fd = q->vec[vec], .events = POLLIN };

	if (vec >= q->n_vectors || poll(&p, 1, timeout_ms) != 1)
		return 0;
	return fq_irq_take(q, vec);
}

int fq_control(struct fq *q, const char *cmd, char *reply, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t got = 0;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", q->ctl);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("control connect");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd) ||
	    write(fd, "\n", 1) != 1) {
		close(fd);
		return -1;
	}
	while (got + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 2000) != 1)
			break;
		n = read(fd, reply + got, size - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		reply[got] = 0;
		if (strchr(reply, '\n'))
			break;
	}
	reply[got] = 0;
	close(fd);
	if (!got || !strchr(reply, '\n'))
		return -1;
	*strchr(reply, '\n') = 0;
	return 0;
}

char *fq_read_log(struct fq *q)
{
	FILE *f = fopen(q->log, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int fq_run_capture(const char *const *args, char *err, size_t size)
{
	const char *argv[32];
	unsigned int n = 0;
	size_t got = 0;
	int p[2], status;
	pid_t pid;

	argv[n++] = fq_devmodel_path();
	while (args[n - 1] && n < 31) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	if (pipe(p))
		return -1;
	pid = spawn(argv, p[1]);
	close(p[1]);
	while (got + 1 < size) {
		ssize_t r = read(p[0], err + got, size - 1 - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	err[got] = 0;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
