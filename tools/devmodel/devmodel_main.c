// SPDX-License-Identifier: MIT
/*
 * mxaccel-devmodel: command line, BAR2 layout and header, the main loop
 * (sockets, the control doorbell, the control socket, the test page) and
 * the hello / goodbye / ring reset handshakes of hw/mxaccel_pci.h.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devmodel.h"

#define MiB (1ULL << 20)

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " DM_PROG " --socket PATH [options]\n"
"\n"
"The MX accelerator PCI device (hw/mxaccel_pci.h, Documentation/pci-device.rst)\n"
"for qemu's ivshmem-doorbell: the ivshmem server and the device peer in one\n"
"process.  Start it first; PATH appears once it listens.  Then:\n"
"\n"
"  qemu-system-x86_64 ... -chardev socket,path=PATH,id=mxhw \\\n"
"      -device ivshmem-doorbell,chardev=mxhw,vectors=<1 + rings>\n"
"\n"
"(vectors=5 with the default 4 rings).  It serves one qemu and exits 0 when\n"
"that qemu disconnects, or on SIGTERM / SIGINT, logging a summary line.\n"
"\n"
"  --socket PATH        the ivshmem server socket (required)\n"
"  --size BYTES         BAR2 size: a power of two, 1M..256G, K/M/G suffixes\n"
"                       (default 256M; backed lazily by a memfd)\n"
"  --rings N            rings, 1..%d (default %d)\n"
"  --depth D            descriptors per ring, a power of two 2..%d (default %d)\n"
"  --test-page          map struct mxhw_test at 0x2000 (fault injection by the\n"
"                       guest through sysfs resource2)\n"
"  --control PATH       a UNIX socket taking lines 'fault KIND RING [ARG\n"
"                       [COUNT]]', 'clear', 'status'; replies 'ok ...' or\n"
"                       'error: ...'\n"
"  --fault KIND:RING[:ARG[:COUNT]]\n"
"                       arm a fault at the driver's first hello (repeatable);\n"
"                       KIND: hang, hang-hard, error (ARG errno, default EIO),\n"
"                       slow (ARG ms, default 100), corrupt, drop-irq, lost;\n"
"                       COUNT jobs it applies to, 0 (default) until cleared\n"
"  --exact-only         run every GEMM exactly, MXHW_DESC_EXACT or not\n"
"  --device-peer ID     the device's ivshmem peer id (default 0)\n"
"  --guest-peer ID      the id given to qemu (default 1), 0..65535, not ID\n"
"  --log FILE           log here instead of stderr\n"
"  -v, --verbose        log every job\n"
"  -h, --help           this text\n"
"\n"
"BAR2: header 0x0, control block 0x1000, test page 0x2000 (--test-page), ring r\n"
"at 0x10000 + r * stride (stride = the registers and depth * (256 + 32) bytes,\n"
"rounded up to 4 KiB), the heap from the next 2 MiB boundary (half the BAR\n"
"below 4 MiB) to the end.  Jobs run on the CPU with libmxaccel: exact kernels\n"
"for MXHW_DESC_EXACT, else the fastest.\n",
		MXHW_MAX_RINGS, DM_DEFAULT_RINGS, MXHW_MAX_RING_DEPTH,
		DM_DEFAULT_DEPTH);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, DM_PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (--help for usage)\n");
	exit(2);
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint64_t parse_size(const char *opt, const char *s)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		cli_error("%s '%s': not a size", opt, s);
	v = strtoull(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end == 'i' || *end == 'B')	/* 256MiB, 256MB */
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (errno || *end || (shift && v > (UINT64_MAX >> shift)))
		cli_error("%s '%s': not a size (bytes, or with K, M, G)", opt,
			  s);
	return (uint64_t)v << shift;
}

static unsigned int parse_uint(const char *opt, const char *s,
			       unsigned long lo, unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		cli_error("%s '%s': not a number (%lu..%lu)", opt, s, lo, hi);
	v = strtoul(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		cli_error("%s '%s': must be %lu..%lu", opt, s, lo, hi);
	return (unsigned int)v;
}

enum {
	OPT_SOCKET = 256, OPT_SIZE, OPT_RINGS, OPT_DEPTH, OPT_TEST_PAGE,
	OPT_CONTROL, OPT_FAULT, OPT_LOG, OPT_DEVICE_PEER, OPT_GUEST_PEER,
	OPT_EXACT_ONLY,
};

static void parse_args(struct dm_config *cfg, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "rings", required_argument, NULL, OPT_RINGS },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "test-page", no_argument, NULL, OPT_TEST_PAGE },
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "fault", required_argument, NULL, OPT_FAULT },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "device-peer", required_argument, NULL, OPT_DEVICE_PEER },
		{ "guest-peer", required_argument, NULL, OPT_GUEST_PEER },
		{ "exact-only", no_argument, NULL, OPT_EXACT_ONLY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char why[200];
	unsigned int i;
	int c;

	*cfg = (struct dm_config){
		.size = DM_DEFAULT_SIZE,
		.rings = DM_DEFAULT_RINGS,
		.depth = DM_DEFAULT_DEPTH,
		.device_peer = 0,
		.guest_peer = 1,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			cfg->socket_path = optarg;
			break;
		case OPT_SIZE:
			cfg->size = parse_size("--size", optarg);
			if (!is_pow2(cfg->size) || cfg->size < MXHW_MIN_BAR_SIZE ||
			    cfg->size > (256ULL << 30))
				cli_error("--size %s: must be a power of two from 1M to 256G (qemu aborts on other sizes)",
					  optarg);
			break;
		case OPT_RINGS:
			cfg->rings = parse_uint("--rings", optarg, 1,
						MXHW_MAX_RINGS);
			break;
		case OPT_DEPTH:
			cfg->depth = parse_uint("--depth", optarg, 2,
						MXHW_MAX_RING_DEPTH);
			if (!is_pow2(cfg->depth))
				cli_error("--depth %s: must be a power of two (2..%d)",
					  optarg, MXHW_MAX_RING_DEPTH);
			break;
		case OPT_TEST_PAGE:
			cfg->test_page = true;
			break;
		case OPT_CONTROL:
			cfg->control_path = optarg;
			break;
		case OPT_FAULT:
			if (cfg->n_initial == DM_MAX_INITIAL_FAULTS)
				cli_error("--fault: at most %d", DM_MAX_INITIAL_FAULTS);
			if (dm_fault_parse_spec(optarg,
						&cfg->initial[cfg->n_initial],
						why, sizeof(why)))
				cli_error("--fault %s", why);
			if (cfg->initial[cfg->n_initial].kind == MXHW_FAULT_CLEAR)
				cli_error("--fault %s: clear is not a fault", optarg);
			cfg->n_initial++;
			break;
		case OPT_LOG:
			cfg->log_path = optarg;
			break;
		case OPT_DEVICE_PEER:
			cfg->device_peer = parse_uint("--device-peer", optarg,
						      0, 65535);
			break;
		case OPT_GUEST_PEER:
			cfg->guest_peer = parse_uint("--guest-peer", optarg, 0,
						     65535);
			break;
		case OPT_EXACT_ONLY:
			cfg->exact_only = true;
			break;
		case 'v':
			cfg->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			if (optopt && optopt < 256)
				cli_error("unknown option '-%c'", optopt);
			cli_error("unknown option or missing argument: '%s'",
				  argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_error("unexpected argument '%s'", argv[optind]);
	if (!cfg->socket_path)
		cli_error("--socket PATH is required");
	if (cfg->device_peer == cfg->guest_peer)
		cli_error("--device-peer and --guest-peer are both %u; they must differ",
			  cfg->guest_peer);
	for (i = 0; i < cfg->n_initial; i++) {
		const struct dm_fault_spec *f = &cfg->initial[i];

		if (f->kind != MXHW_FAULT_LOST && f->ring >= cfg->rings)
			cli_error("--fault %s:%u: ring %u, the device has %u",
				  dm_fault_name(f->kind), f->ring, f->ring,
				  cfg->rings);
	}
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static void make_layout(struct dm_config *cfg, struct dm_layout *lay)
{
	uint64_t ring_bytes = sizeof(struct mxhw_ring_regs) +
			      (uint64_t)cfg->depth *
			      (sizeof(struct mxhw_desc) + DM_CPL_SIZE);
	uint64_t align = cfg->size / 2 < DM_HEAP_ALIGN ? cfg->size / 2 :
			 DM_HEAP_ALIGN;
	uint64_t end;

	_Static_assert(sizeof(struct mxhw_cpl) == DM_CPL_SIZE, "cpl size");
	_Static_assert(sizeof(struct mxhw_desc) == 256, "desc size");
	_Static_assert(sizeof(struct mxhw_header) <= DM_CTRL_OFFSET,
		       "header size");
	*lay = (struct dm_layout){
		.size = cfg->size,
		.ctrl_offset = DM_CTRL_OFFSET,
		.test_offset = cfg->test_page ? DM_TEST_OFFSET : 0,
		.ring_offset = DM_RING_OFFSET,
		.ring_stride = round_up(ring_bytes, DM_RING_ALIGN),
		.n_rings = cfg->rings,
		.depth = cfg->depth,
	};
	end = lay->ring_offset + cfg->rings * lay->ring_stride;
	lay->heap_offset = round_up(end, align);
	if (lay->heap_offset >= cfg->size) {
		uint64_t need = DM_HEAP_ALIGN * 2;

		while (round_up(end, need / 2 < DM_HEAP_ALIGN ? need / 2 :
				DM_HEAP_ALIGN) >= need)
			need *= 2;
		cli_error("--size %llu: too small for %u rings of depth %u (they end at 0x%llx); use --size %lluM or more",
			  (unsigned long long)cfg->size, cfg->rings, cfg->depth,
			  (unsigned long long)end,
			  (unsigned long long)(need / MiB));
	}
	lay->heap_size = cfg->size - lay->heap_offset;
}

static void write_header(struct dm *dm)
{
	const struct dm_layout *lay = &dm->lay;
	struct mxhw_header *h = dm->hdr;

	h->magic = htole32(MXHW_MAGIC);
	h->version_major = htole16(MXHW_VERSION_MAJOR);
	h->version_minor = htole16(MXHW_VERSION_MINOR);
	h->header_size = htole32(sizeof(*h));
	h->device_peer = htole32(dm->cfg.device_peer);
	h->n_rings = htole32(lay->n_rings);
	h->ring_depth = htole32(lay->depth);
	h->desc_size = htole32(sizeof(struct mxhw_desc));
	h->cpl_size = htole32(DM_CPL_SIZE);
	h->n_doorbells = htole32(dm->n_vectors);
	h->n_irqs = htole32(dm->n_vectors);
	h->max_dim = htole32(DM_MAX_DIM);
	h->offset_align = htole32(DM_OFFSET_ALIGN);
	h->elem_mask = htole64((1ULL << DRM_MXACCEL_ELEM_E4M3) |
			       (1ULL << DRM_MXACCEL_ELEM_E5M2) |
			       (1ULL << DRM_MXACCEL_ELEM_E2M3) |
			       (1ULL << DRM_MXACCEL_ELEM_E3M2) |
			       (1ULL << DRM_MXACCEL_ELEM_E2M1));
	h->op_mask = htole64((1ULL << DRM_MXACCEL_OP_GEMM) |
			     (1ULL << DRM_MXACCEL_OP_QUANTIZE));
	h->mode_mask = htole64((1ULL << DRM_MXACCEL_SCALE_FLOOR) |
			       (1ULL << DRM_MXACCEL_SCALE_RCEIL) |
			       (1ULL << DRM_MXACCEL_SCALE_CEIL) |
			       (1ULL << DRM_MXACCEL_SCALE_EVEN));
	h->desc_flags = htole64(MXHW_DESC_ACCUMULATE | MXHW_DESC_EXACT);
	h->features = htole64(dm->cfg.test_page ? MXHW_FEAT_TEST_PAGE : 0);
	h->ctrl_offset = htole64(lay->ctrl_offset);
	h->ring_offset = htole64(lay->ring_offset);
	h->ring_stride = htole64(lay->ring_stride);
	h->heap_offset = htole64(lay->heap_offset);
	h->heap_size = htole64(lay->heap_size);
	h->test_offset = htole64(lay->test_offset);
	snprintf(h->name, sizeof(h->name), "%s", DM_DEVICE_NAME);
}

static int setup_shm(struct dm *dm)
{
	unsigned int i;

	dm->shm_fd = memfd_create("mxaccel-devmodel-bar2", MFD_CLOEXEC);
	if (dm->shm_fd < 0 || ftruncate(dm->shm_fd, (off_t)dm->lay.size)) {
		dm_log(dm, "error: BAR2 memfd of %llu bytes: %s",
		       (unsigned long long)dm->lay.size, strerror(errno));
		return -errno;
	}
	dm->shm = mmap(NULL, (size_t)dm->lay.size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, dm->shm_fd, 0);
	if (dm->shm == MAP_FAILED) {
		dm_log(dm, "error: mmap of BAR2: %s", strerror(errno));
		return -errno;
	}
	dm->hdr = (struct mxhw_header *)dm->shm;
	dm->ctrl = (struct mxhw_ctrl *)(dm->shm + dm->lay.ctrl_offset);
	dm->test = dm->lay.test_offset ?
		   (struct mxhw_test *)(dm->shm + dm->lay.test_offset) : NULL;
	for (i = 0; i < dm->n_vectors; i++) {
		dm->db_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (dm->db_fd[i] < 0)
			return -errno;
	}
	write_header(dm);
	dm_st32(&dm->ctrl->dev_status, MXHW_STATUS_OFF);
	return 0;
}

static void log_layout(struct dm *dm)
{
	const struct dm_layout *lay = &dm->lay;

	dm_log(dm, "%s: BAR2 %llu MiB (memfd); header 0x0, ctrl 0x%llx, test page %s, %u rings of depth %u at 0x%llx stride 0x%llx (descriptors +0x%zx, completions +0x%llx), heap 0x%llx..0x%llx (%llu MiB)",
	       DM_DEVICE_NAME, (unsigned long long)(lay->size / MiB),
	       (unsigned long long)lay->ctrl_offset,
	       lay->test_offset ? "0x2000" : "none", lay->n_rings, lay->depth,
	       (unsigned long long)lay->ring_offset,
	       (unsigned long long)lay->ring_stride, MXHW_RING_SQ_OFFSET,
	       (unsigned long long)mxhw_ring_cq_offset(lay->depth,
						       sizeof(struct mxhw_desc)),
	       (unsigned long long)lay->heap_offset,
	       (unsigned long long)lay->size,
	       (unsigned long long)(lay->heap_size / MiB));
	dm_log(dm, "doorbells and vectors: %u (qemu: -device ivshmem-doorbell,vectors=%u); device peer %u, guest peer %u; max_dim %u, offset_align %u; GEMMs %s; listening on %s%s%s",
	       dm->n_vectors, dm->n_vectors, dm->cfg.device_peer,
	       dm->cfg.guest_peer, DM_MAX_DIM, DM_OFFSET_ALIGN,
	       dm->cfg.exact_only ? "always exact" :
	       "exact with MXHW_DESC_EXACT, else the fastest kernel",
	       dm->cfg.socket_path,
	       dm->cfg.control_path ? ", control " : "",
	       dm->cfg.control_path ? dm->cfg.control_path : "");
}

/* --- handshakes ----------------------------------------------------------- */

static void zero_ring(struct dm_ring *r)
{
	struct mxhw_ring_regs *g = r->regs;

	/* "All indices 0": both sides' (the driver waits for the hello). */
	dm_st32(&g->sq_tail, 0);
	dm_st32(&g->cq_head, 0);
	dm_st32(&g->abort_seq, 0);
	dm_st32(&g->reset_req, 0);
	dm_st32(&g->sq_head, 0);
	dm_st32(&g->cq_tail, 0);
	dm_st32(&g->reset_ack, 0);
	r->sq_head = 0;
	r->cq_tail = 0;
	r->bad_tail = UINT32_MAX;
	r->reset_pending = false;
	r->reset_ack_val = 0;
	memset(r->fault, 0, sizeof(r->fault));
}

static void do_hello(struct dm *dm, uint32_t gen)
{
	char why[160];
	unsigned int i;
	bool first;

	dm_rings_park(dm);
	pthread_mutex_lock(&dm->lock);
	for (i = 0; i < dm->cfg.rings; i++)
		zero_ring(&dm->rings[i]);
	first = !dm->hello_seen;
	dm->hello_seen = true;
	dm->hellos++;
	dm->status = MXHW_STATUS_READY;
	dm->irq_on = true;
	dm->last_gen = gen;
	dm_st32(&dm->ctrl->dev_status, MXHW_STATUS_READY);
	dm_st32(&dm->ctrl->dev_gen, gen);
	for (i = 0; i < dm->cfg.rings; i++) {
		dm->rings[i].running = true;
		dm_ring_wake(&dm->rings[i]);
	}
	dm_log(dm, "hello, gen %u: %s; every ring empty, no fault armed",
	       gen, first ? "first" : "device reset");
	dm_raise(dm, MXHW_IRQ_CONTROL);
	for (i = 0; first && i < dm->cfg.n_initial; i++)
		if (dm_fault_apply(dm, &dm->cfg.initial[i], "--fault", why,
				   sizeof(why)))
			dm_log(dm, "--fault: %s", why);
	pthread_mutex_unlock(&dm->lock);
}

static void do_goodbye(struct dm *dm, uint32_t gen)
{
	dm_rings_park(dm);
	pthread_mutex_lock(&dm->lock);
	dm->goodbyes++;
	dm->status = MXHW_STATUS_OFF;
	dm->irq_on = false;
	dm->last_gen = gen;
	dm_st32(&dm->ctrl->dev_status, MXHW_STATUS_OFF);
	dm_st32(&dm->ctrl->dev_gen, gen);
	dm_log(dm, "goodbye, gen %u: rings stopped, no interrupts until the next hello",
	       gen);
	pthread_mutex_unlock(&dm->lock);
}

static void control_doorbell(struct dm *dm)
{
	static uint32_t ignored_gen;
	uint32_t cmd, gen, req;
	unsigned int i;
	uint64_t v;

	while (read(dm->db_fd[MXHW_DB_CONTROL], &v, sizeof(v)) ==
	       (ssize_t)sizeof(v))
		;
	pthread_mutex_lock(&dm->lock);
	if (dm->lost) {
		pthread_mutex_unlock(&dm->lock);
		dm_vlog(dm, "control doorbell ignored: the device is lost");
		return;
	}
	pthread_mutex_unlock(&dm->lock);

	gen = dm_ld32(&dm->ctrl->drv_gen);
	cmd = dm_ld32(&dm->ctrl->drv_cmd);
	if (gen && gen != dm->last_gen) {
		if (cmd == MXHW_CMD_HELLO) {
			do_hello(dm, gen);
		} else if (cmd == MXHW_CMD_GOODBYE) {
			do_goodbye(dm, gen);
		} else if (gen != ignored_gen) {
			ignored_gen = gen;
			dm_log(dm, "control: command %u (gen %u) ignored", cmd,
			       gen);
		}
	}

	/* Ring resets: a new non-zero reset_req. */
	pthread_mutex_lock(&dm->lock);
	for (i = 0; dm->status == MXHW_STATUS_READY && i < dm->cfg.rings;
	     i++) {
		struct dm_ring *r = &dm->rings[i];

		req = dm_ld32(&r->regs->reset_req);
		if (!req || req == r->reset_ack_val ||
		    (r->reset_pending && r->reset_val == req))
			continue;
		r->reset_pending = true;
		r->reset_val = req;
		dm_log(dm, "ring %u: reset %u requested", i, req);
		dm_ring_wake(r);
	}
	pthread_mutex_unlock(&dm->lock);
}

/* --- main loop ------------------------------------------------------------ */

static void log_summary(struct dm *dm, const char *why)
{
	uint64_t jobs = 0, ops = 0, failed = 0;
	char rings[16 * 24] = "";
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < dm->cfg.rings; i++) {
		jobs += dm->rings[i].jobs;
		ops += dm->rings[i].ops;
		failed += dm->rings[i].failed;
		len += (size_t)snprintf(rings + len, sizeof(rings) - len,
					"%s%llu", i ? " " : "",
					(unsigned long long)dm->rings[i].jobs);
	}
	dm_log(dm, "summary: %s; jobs %llu (failed %llu), ops %llu, faulted jobs %llu, hellos %llu, goodbyes %llu, ring resets %llu, interrupts %llu, jobs per ring [%s]",
	       why, (unsigned long long)jobs, (unsigned long long)failed,
	       (unsigned long long)ops, (unsigned long long)dm->faulted,
	       (unsigned long long)dm->hellos,
	       (unsigned long long)dm->goodbyes,
	       (unsigned long long)dm->resets,
	       (unsigned long long)dm->irqs, rings);
}

static int serve(struct dm *dm, int sig_fd, const char **why)
{
	struct pollfd p[4 + DM_MAX_CTL_CLIENTS];
	int timeout = dm->test ? 5 : 100;
	unsigned int i, n;
	uint64_t t0 = dm_now_ns();
	char buf[64];

	for (;;) {
		n = 0;
		p[n++] = (struct pollfd){ .fd = sig_fd, .events = POLLIN };
		p[n++] = (struct pollfd){
			.fd = dm->client_fd >= 0 ? dm->client_fd : dm->listen_fd,
			.events = POLLIN };
		p[n++] = (struct pollfd){ .fd = dm->db_fd[MXHW_DB_CONTROL],
					  .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = dm->ctl_fd, .events = POLLIN };
		for (i = 0; i < DM_MAX_CTL_CLIENTS; i++)
			p[n++] = (struct pollfd){ .fd = dm->ctl[i].fd,
						  .events = POLLIN };
		if (poll(p, n, timeout) < 0 && errno != EINTR) {
			*why = "poll failed";
			return 1;
		}
		dm_st64(&dm->ctrl->uptime_ns, dm_now_ns() - t0);
		dm_test_page_poll(dm);
		if (p[0].revents) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				*why = si.ssi_signo == SIGINT ? "SIGINT" :
				       "SIGTERM";
			return 0;
		}
		if (p[1].revents && dm->client_fd < 0) {
			if (dm_server_accept(dm) < 0) {
				*why = "client setup failed";
				return 1;
			}
		} else if (p[1].revents) {
			/* Traffic is one-way: a byte or EOF means it is gone. */
			ssize_t r = recv(dm->client_fd, buf, sizeof(buf),
					 MSG_DONTWAIT);

			if (r >= 0 || (errno != EAGAIN && errno != EINTR)) {
				*why = "the client disconnected";
				return 0;
			}
		}
		if (p[2].revents)
			control_doorbell(dm);
		if (p[3].revents)
			dm_control_accept(dm);
		for (i = 0; i < DM_MAX_CTL_CLIENTS; i++) {
			struct dm_ctl_client *c = &dm->ctl[i];

			if (c->fd >= 0 && p[4 + i].revents &&
			    !dm_control_serve(dm, c)) {
				close(c->fd);
				c->fd = -1;
			}
		}
	}
}

int main(int argc, char **argv)
{
	static struct dm dm;
	const char *why = "?";
	unsigned int i;
	sigset_t sigs;
	int sig_fd, ret;

	parse_args(&dm.cfg, argc, argv);
	make_layout(&dm.cfg, &dm.lay);
	clock_gettime(CLOCK_MONOTONIC, &dm.t0);
	pthread_mutex_init(&dm.lock, NULL);
	pthread_mutex_init(&dm.log_lock, NULL);
	pthread_mutex_init(&dm.test_lock, NULL);
	pthread_cond_init(&dm.cond, NULL);
	dm.n_vectors = 1 + dm.cfg.rings;
	dm.listen_fd = dm.client_fd = dm.ctl_fd = -1;
	for (i = 0; i < DM_MAX_VECTORS; i++)
		dm.db_fd[i] = dm.irq_fd[i] = -1;
	for (i = 0; i < MXHW_MAX_RINGS; i++)
		dm.rings[i].wake_fd = -1;
	if (dm.cfg.log_path) {
		dm.log = fopen(dm.cfg.log_path, "a");
		if (!dm.log) {
			fprintf(stderr, DM_PROG ": --log %s: %s\n",
				dm.cfg.log_path, strerror(errno));
			return 1;
		}
	}
	/* The device decides exactness per descriptor, not the environment. */
	if (getenv("MXACCEL_KERNEL"))
		dm_log(&dm, "note: MXACCEL_KERNEL=%s ignored",
		       getenv("MXACCEL_KERNEL"));
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_THREADS");

	/* Signals arrive on a signalfd; every thread inherits the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC);

	ret = sig_fd < 0 ? -errno : setup_shm(&dm);
	if (!ret)
		ret = dm_rings_start(&dm);
	if (!ret)
		ret = dm_control_listen(&dm);
	/* Last: whoever sees the socket may connect at once. */
	if (!ret)
		ret = dm_server_listen(&dm);
	if (ret) {
		dm_log(&dm, "error: start-up failed: %s", strerror(-ret));
		dm_rings_stop(&dm);
		dm_control_close(&dm);
		return 1;
	}
	log_layout(&dm);

	ret = serve(&dm, sig_fd, &why);
	dm_rings_stop(&dm);
	dm_control_close(&dm);
	dm_server_unlink(&dm);
	log_summary(&dm, why);
	if (dm.log)
		fclose(dm.log);
	return ret;
}
