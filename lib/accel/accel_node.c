// SPDX-License-Identifier: MIT
/*
 * Finding mxaccel device nodes and talking to them.  libdrm's
 * drmGetDevices2() (2.4.114) sees neither /dev/accel nor a platform device
 * like ours, so the nodes are enumerated here and recognised by their DRM
 * driver name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "accel.h"
#include "mxaccel_accel.h"

int accel_ioctl(int fd, unsigned long request, void *arg)
{
	/* drmIoctl() restarts on EINTR/EAGAIN; the driver never EAGAINs. */
	return drmIoctl(fd, request, arg) ? -errno : 0;
}

static bool is_mxaccel(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool yes = v && v->name && !strcmp(v->name, "mxaccel");

	drmFreeVersion(v);
	return yes;
}

static int node_filter(const struct dirent *e)
{
	return !strncmp(e->d_name, "accel", 5) ||
	       !strncmp(e->d_name, "renderD", 7);
}

/* Scan one directory, appending matching nodes in name order. */
static void scan(const char *dir, struct accel_node *nodes, unsigned int max,
		 unsigned int *n, unsigned int *denied)
{
	struct dirent **names;
	int i, count = scandir(dir, &names, node_filter, versionsort);

	for (i = 0; i < count; i++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		free(names[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			if (errno == EACCES || errno == EPERM)
				(*denied)++;
			continue;
		}
		if (is_mxaccel(fd) && *n < max)
			mxa__strlcpy(nodes[(*n)++].path, path,
				     sizeof(nodes[0].path));
		close(fd);
	}
	if (count >= 0)
		free(names);
}

unsigned int accel_discover(struct accel_node *nodes, unsigned int max,
			    char *reason, size_t size)
{
	unsigned int n = 0, denied = 0;

	scan("/dev/accel", nodes, max, &n, &denied);
	scan("/dev/dri", nodes, max, &n, &denied);
	if (!n && reason) {
		if (denied)
			snprintf(reason, size,
				 "%u DRM node(s) could not be opened (permission denied)",
				 denied);
		else
			snprintf(reason, size,
				 "no /dev/accel/accel* or /dev/dri/renderD* node belongs to the mxaccel driver (is mxaccel.ko loaded?)");
	}
	return n;
}

static int queue_create(struct accel_device *ad, struct accel_queue **out)
{
	struct drm_mxaccel_queue_create qc = { 0 };
	struct accel_queue *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return -ENOMEM;
	ret = accel_ioctl(ad->fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &qc);
	if (ret) {
		free(q);
		return mxa__err(ret, "%s: QUEUE_CREATE: %s", ad->path,
				mxa_strerror(ret));
	}
	q->fd = ad->fd;
	q->id = qc.queue_id;
	q->syncobj = qc.syncobj;
	q->refs = 1;
	*out = q;
	return 0;
}

static void queue_destroy(struct accel_queue *q)
{
	struct drm_mxaccel_queue_destroy qd = { .queue_id = q->id };

	accel_ioctl(q->fd, DRM_IOCTL_MXACCEL_QUEUE_DESTROY, &qd);
	drmSyncobjDestroy(q->fd, q->syncobj);
	free(q);
}

int accel_queue_get(struct accel_device *ad, struct accel_queue **out)
{
	int ret = 0;

	pthread_mutex_lock(&ad->lock);
	if (!ad->queue || ad->queue->guilty) {
		struct accel_queue *q = NULL;

		ret = queue_create(ad, &q);
		if (!ret) {
			if (ad->queue && !--ad->queue->refs)
				queue_destroy(ad->queue);
			ad->queue = q;
		}
	}
	if (!ret) {
		ad->queue->refs++;
		*out = ad->queue;
	}
	pthread_mutex_unlock(&ad->lock);
	return ret;
}

void accel_queue_put(struct accel_device *ad, struct accel_queue *q)
{
	bool last;

	pthread_mutex_lock(&ad->lock);
	last = !--q->refs;
	if (last && ad->queue == q)
		ad->queue = NULL;
	pthread_mutex_unlock(&ad->lock);
	if (last)
		queue_destroy(q);
}
