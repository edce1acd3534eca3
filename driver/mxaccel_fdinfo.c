// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo, per Documentation/gpu/drm-usage-stats.rst: drm-driver and
 * drm-client-id (from the DRM core where it prints them), one
 * drm-engine-ring<N> busy-time key per ring, and the memory keys of the
 * DRM core's helper where the kernel has it.
 */
#include <linux/slab.h>
#include <linux/seq_file.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_fdinfo.h"

struct mxaccel_client *mxaccel_client_create(u64 id)
{
	struct mxaccel_client *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);

	if (!c)
		return NULL;
	kref_init(&c->ref);
	c->id = id;
	return c;
}

void mxaccel_client_get(struct mxaccel_client *c)
{
	kref_get(&c->ref);
}

static void client_release(struct kref *ref)
{
	kfree(container_of(ref, struct mxaccel_client, ref));
}

void mxaccel_client_put(struct mxaccel_client *c)
{
	kref_put(&c->ref, client_release);
}

void mxaccel_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct mxaccel_device *mdev = mfile->mdev;
	unsigned int i;

	for (i = 0; i < mdev->n_rings; i++)
		drm_printf(p, "drm-engine-ring%u:\t%llu ns\n", i,
			   (u64)atomic64_read(&mfile->client->busy_ns[i]));
	mxaccel_show_memory_stats(p, file);
}

void mxaccel_show_fdinfo_legacy(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_printer p = drm_seq_file_printer(m);

	drm_printf(&p, "drm-driver:\t%s\n", file->minor->dev->driver->name);
	drm_printf(&p, "drm-client-id:\t%llu\n", mfile->client->id);
	mxaccel_show_fdinfo(&p, file);
}
