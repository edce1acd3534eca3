// SPDX-License-Identifier: MIT
/*
 * A small fork-join thread pool: one parallel region at a time, tasks
 * claimed from a shared counter, the calling thread works too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu.h"

struct cpu_pool {
	pthread_mutex_t region;		/* one parallel region at a time */
	pthread_mutex_t lock;
	pthread_cond_t start;
	pthread_cond_t finish;
	unsigned int n_workers;
	pthread_t *workers;
	struct worker_arg *args;
	unsigned long generation;
	bool quit;
	/* the current region */
	void (*fn)(void *arg, unsigned int task, unsigned int worker);
	void *arg;
	unsigned int n_tasks;
	unsigned int next;		/* next unclaimed task */
	unsigned int busy;		/* workers still inside the region */
};

unsigned int cpu_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/* Claim and run tasks until none are left.  Called with lock held. */
static void drain(struct cpu_pool *p, unsigned int self)
{
	while (p->next < p->n_tasks) {
		unsigned int t = p->next++;

		pthread_mutex_unlock(&p->lock);
		p->fn(p->arg, t, self);
		pthread_mutex_lock(&p->lock);
	}
}

struct worker_arg {
	struct cpu_pool *pool;
	unsigned int self;
};

static void *worker(void *arg)
{
	struct worker_arg *wa = arg;
	struct cpu_pool *p = wa->pool;
	unsigned int self = wa->self;
	unsigned long seen = 0;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->quit && p->generation == seen)
			pthread_cond_wait(&p->start, &p->lock);
		if (p->quit)
			break;
		seen = p->generation;
		drain(p, self);
		if (--p->busy == 0)
			pthread_cond_signal(&p->finish);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct cpu_pool *cpu_pool_create(unsigned int threads)
{
	struct cpu_pool *p = calloc(1, sizeof(*p));
	unsigned int i;

	if (!p)
		return NULL;
	pthread_mutex_init(&p->region, NULL);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->start, NULL);
	pthread_cond_init(&p->finish, NULL);
	if (threads > 1) {
		p->workers = calloc(threads - 1, sizeof(*p->workers));
		p->args = calloc(threads - 1, sizeof(*p->args));
		if (!p->workers || !p->args)
			goto err_free;
	}
	/* The caller is worker 0; pool threads are 1..threads-1. */
	for (i = 0; i + 1 < threads; i++) {
		p->args[i] = (struct worker_arg){ .pool = p, .self = i + 1 };
		if (pthread_create(&p->workers[i], NULL, worker, &p->args[i]))
			break;
		p->n_workers++;
	}
	return p;

err_free:
	free(p->args);
	free(p->workers);
	free(p);
	return NULL;
}

void cpu_pool_destroy(struct cpu_pool *p)
{
	unsigned int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->n_workers; i++)
		pthread_join(p->workers[i], NULL);
	free(p->workers);
	free(p->args);
	pthread_cond_destroy(&p->finish);
	pthread_cond_destroy(&p->start);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->region);
	free(p);
}

unsigned int cpu_pool_threads(const struct cpu_pool *p)
{
	return p->n_workers + 1;
}

void cpu_parallel(struct cpu_pool *p, unsigned int n,
		  void (*fn)(void *arg, unsigned int task, unsigned int worker),
		  void *arg)
{
	unsigned int t;

	if (n <= 1 || !p->n_workers) {
		for (t = 0; t < n; t++)
			fn(arg, t, 0);
		return;
	}
	pthread_mutex_lock(&p->region);
	pthread_mutex_lock(&p->lock);
	p->fn = fn;
	p->arg = arg;
	p->n_tasks = n;
	p->next = 0;
	p->busy = p->n_workers;
	p->generation++;
	pthread_cond_broadcast(&p->start);
	drain(p, 0);
	while (p->busy)
		pthread_cond_wait(&p->finish, &p->lock);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_unlock(&p->region);
}
