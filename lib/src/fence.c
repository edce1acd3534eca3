// SPDX-License-Identifier: MIT
/*
 * Fences for asynchronous jobs.  The generic implementation runs the job on
 * a thread of its own; backends with hardware queues will signal fences
 * from their completion path instead.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"

struct mxa_fence {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool done;
	int status;
	struct mxa_device *dev;
	const struct mxa_kernel *kernel;
	struct mxa_job job;
};

static void *fence_thread(void *arg)
{
	struct mxa_fence *f = arg;
	int status = f->kernel->run(f->dev, &f->job);

	pthread_mutex_lock(&f->lock);
	f->status = status;
	f->done = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int mxa__fence_start(struct mxa_device *dev, const struct mxa_kernel *k,
		     const struct mxa_job *job, struct mxa_fence **out)
{
	struct mxa_fence *f = calloc(1, sizeof(*f));
	pthread_condattr_t attr;
	int ret;

	if (!f)
		return -ENOMEM;
	f->dev = dev;
	f->kernel = k;
	f->job = *job;
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&f->thread, NULL, fence_thread, f);
	if (ret) {
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		free(f);
		return mxa__err(-ENOMEM, "gemm_async: cannot start a job thread: %s",
				strerror(ret));
	}
	*out = f;
	return 0;
}

MXA_EXPORT int mxa_fence_wait(struct mxa_fence *f, int64_t timeout_ns)
{
	struct timespec dl;
	int ret = 0;

	if (!f)
		return mxa__err(-EINVAL, "fence_wait: fence is NULL");
	if (timeout_ns > 0) {
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += timeout_ns / 1000000000;
		dl.tv_nsec += timeout_ns % 1000000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&f->lock);
	while (!f->done && ret == 0) {
		if (timeout_ns == 0)
			ret = -ETIME;
		else if (timeout_ns < 0)
			pthread_cond_wait(&f->cond, &f->lock);
		else if (pthread_cond_timedwait(&f->cond, &f->lock, &dl))
			ret = f->done ? 0 : -ETIME;
	}
	if (f->done)
		ret = f->status;
	pthread_mutex_unlock(&f->lock);
	return ret;
}

MXA_EXPORT void mxa_fence_free(struct mxa_fence *f)
{
	if (!f)
		return;
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
