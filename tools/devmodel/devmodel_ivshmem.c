// SPDX-License-Identifier: MIT
/*
 * The ivshmem server side (qemu docs/specs/ivshmem-spec.txt, QEMU 2.5 and
 * later): a UNIX stream socket, one 8-byte little-endian int64 per
 * sendmsg(), at most one file descriptor with it (SCM_RIGHTS).  On connect,
 * in exactly this order (qemu segfaults otherwise, recipe gotcha 3):
 *
 *   1. 0                    the protocol version
 *   2. the client's id      (--guest-peer)
 *   3. -1 + the shm fd      BAR2 is its st_size, mapped MAP_SHARED
 *   4. device_peer x N      each with one of our doorbell eventfds; the
 *                           k-th is our vector k-1: the guest rings us
 *                           with (device_peer << 16) | (k-1)
 *   5. client id x N        each with one of the guest's own eventfds,
 *                           its MSI-X vector k-1, which we write to
 *                           interrupt it
 *
 * Exactly one client: the device's doorbell eventfds are shared, so it
 * could not tell two guests apart.  A second qemu must not be accepted and
 * closed during its setup (it then spins in realize forever, gotcha 4),
 * nor left waiting in the backlog (it would spin the same way once we
 * exit).  So once the first client is in, the listening socket is closed
 * and its path unlinked: a later qemu fails at once with "Failed to
 * connect to ...: No such file or directory".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devmodel.h"

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/*
 * Listen on cfg.socket_path, which appears (rename) only once the socket
 * listens: whoever waits for the path may connect at once.
 */
int dm_server_listen(struct dm *dm)
{
	const char *path = dm->cfg.socket_path;
	struct sockaddr_un sa;
	char tmp[sizeof(sa.sun_path) + 32];
	int fd, ret;

	ret = snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid());
	if (ret < 0 || (size_t)ret >= sizeof(sa.sun_path) ||
	    fill_addr(&sa, tmp)) {
		dm_log(dm, "error: --socket %s: too long for a UNIX socket (at most %zu bytes with the .tmp-PID suffix)",
		       path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)) {
		ret = -errno;
		dm_log(dm, "error: --socket %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return ret;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		dm_log(dm, "error: --socket %s: rename from %s: %s", path, tmp,
		       strerror(errno));
		close(fd);
		unlink(tmp);
		return ret;
	}
	dm->listen_fd = fd;
	dm->socket_linked = true;
	return 0;
}

void dm_server_unlink(struct dm *dm)
{
	if (dm->socket_linked)
		unlink(dm->cfg.socket_path);
	dm->socket_linked = false;
}

static int send_msg(int sock, int64_t value, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	int64_t le = (int64_t)htole64((uint64_t)value);
	struct iovec iov = { .iov_base = &le, .iov_len = sizeof(le) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(le) ? 0 : -EIO;
}

/* Accept the one client, make its vector eventfds, send the setup. */
int dm_server_accept(struct dm *dm)
{
	unsigned int i, n = dm->n_vectors;
	int fd, ret;

	fd = accept4(dm->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	/* No second client: see the comment at the top. */
	close(dm->listen_fd);
	dm->listen_fd = -1;
	dm_server_unlink(dm);

	for (i = 0; i < n; i++) {
		dm->irq_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (dm->irq_fd[i] < 0) {
			ret = -errno;
			goto err;
		}
	}
	ret = send_msg(fd, 0, -1);
	if (!ret)
		ret = send_msg(fd, dm->cfg.guest_peer, -1);
	if (!ret)
		ret = send_msg(fd, -1, dm->shm_fd);
	for (i = 0; i < n && !ret; i++)
		ret = send_msg(fd, dm->cfg.device_peer, dm->db_fd[i]);
	for (i = 0; i < n && !ret; i++)
		ret = send_msg(fd, dm->cfg.guest_peer, dm->irq_fd[i]);
	if (ret)
		goto err;
	dm->client_fd = fd;
	dm_log(dm, "client connected: guest peer %u, device peer %u, %u vectors each way; socket path removed (one client only)",
	       dm->cfg.guest_peer, dm->cfg.device_peer, n);
	return 1;
err:
	dm_log(dm, "error: setup of the client failed: %s", strerror(-ret));
	/*
	 * The client is half set up: keep its socket open (closing it makes
	 * qemu spin in realize) and let it go when we exit.
	 */
	dm->client_fd = fd;
	return ret;
}
