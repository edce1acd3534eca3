// SPDX-License-Identifier: MIT
/*
 * Fences for asynchronous jobs: the public calls, and the generic thread
 * fence that runs works on a thread of its own.  Backends with device
 * queues provide fences of their own (struct mxa_fence_ops).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"

struct thread_fence {
	struct mxa_fence base;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool done;
	int status;
	struct mxa_device *dev;
	unsigned int count;
	struct mxa_work works[];
};

static struct thread_fence *to_thread_fence(struct mxa_fence *f)
{
	return (struct thread_fence *)((char *)f -
				       offsetof(struct thread_fence, base));
}

static void *fence_thread(void *arg)
{
	struct thread_fence *f = arg;
	int status = 0;
	unsigned int i;

	for (i = 0; i < f->count && !status; i++)
		status = f->works[i].kernel->run(f->dev, &f->works[i].job);

	pthread_mutex_lock(&f->lock);
	f->status = status;
	f->done = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

static int thread_fence_wait(struct mxa_fence *fence, int64_t timeout_ns);
static void thread_fence_release(struct mxa_fence *fence);

static const struct mxa_fence_ops thread_fence_ops = {
	.wait = thread_fence_wait,
	.release = thread_fence_release,
};

int mxa__fence_thread(struct mxa_device *dev, const struct mxa_work *works,
		      unsigned int count, struct mxa_fence **out)
{
	struct thread_fence *f;
	pthread_condattr_t attr;
	int ret;

	f = calloc(1, sizeof(*f) + count * sizeof(f->works[0]));
	if (!f)
		return -ENOMEM;
	f->base.ops = &thread_fence_ops;
	f->dev = dev;
	f->count = count;
	memcpy(f->works, works, count * sizeof(f->works[0]));
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
		return mxa__err(-ENOMEM, "cannot start a job thread: %s",
				strerror(ret));
	}
	*out = &f->base;
	return 0;
}

static int thread_fence_wait(struct mxa_fence *fence, int64_t timeout_ns)
{
	struct thread_fence *f = to_thread_fence(fence);
	struct timespec dl;
	int ret = 0;

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

static void thread_fence_release(struct mxa_fence *fence)
{
	struct thread_fence *f = to_thread_fence(fence);

	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

MXA_EXPORT int mxa_fence_wait(struct mxa_fence *fence, int64_t timeout_ns)
{
	if (!fence)
		return mxa__err(-EINVAL, "fence_wait: fence is NULL");
	return fence->ops->wait(fence, timeout_ns);
}

MXA_EXPORT void mxa_fence_free(struct mxa_fence *fence)
{
	if (fence)
		fence->ops->release(fence);
}
