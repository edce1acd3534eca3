/* SPDX-License-Identifier: MIT */
/*
 * mxaccel: OCP Microscaling (MX) accelerator queues.
 *
 * The device runs block-scaled GEMM and quantize jobs on buffer objects.
 * Jobs are submitted to per-file queues; each queue owns a timeline syncobj
 * whose point N signals when the queue's N-th job completes, so completion
 * can be waited for with the standard DRM syncobj ioctls as well as with
 * DRM_IOCTL_MXACCEL_JOB_WAIT.
 *
 * Conventions (Documentation/process/botching-up-ioctls.rst): every struct
 * is a multiple of 64 bits with explicit padding; pad and reserved fields
 * must be zero and unknown flags are rejected with -EINVAL; pointers are
 * __u64; timeouts are absolute CLOCK_MONOTONIC nanoseconds; arrays carry
 * their element size so structs can grow.
 */
#ifndef _UAPI_MXACCEL_ACCEL_H_
#define _UAPI_MXACCEL_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_MXACCEL_UAPI_VERSION	4

/*
 * Largest element size accepted for growable arrays (SUBMIT's op_size and
 * sync_size): a larger one fails with -E2BIG, so that one ioctl cannot make
 * the driver scan gigabytes of user memory for non-zero bytes.
 */
#define DRM_MXACCEL_MAX_ELEM_SIZE	4096

#define DRM_MXACCEL_GET_PARAM		0x00
#define DRM_MXACCEL_BO_CREATE		0x01
#define DRM_MXACCEL_BO_INFO		0x02
#define DRM_MXACCEL_BO_WAIT		0x03
#define DRM_MXACCEL_QUEUE_CREATE	0x04
#define DRM_MXACCEL_QUEUE_DESTROY	0x05
#define DRM_MXACCEL_SUBMIT		0x06
#define DRM_MXACCEL_JOB_WAIT		0x07

#define DRM_IOCTL_MXACCEL_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MXACCEL_GET_PARAM, \
		 struct drm_mxaccel_get_param)
#define DRM_IOCTL_MXACCEL_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MXACCEL_BO_CREATE, \
		 struct drm_mxaccel_bo_create)
#define DRM_IOCTL_MXACCEL_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MXACCEL_BO_INFO, \
		 struct drm_mxaccel_bo_info)
#define DRM_IOCTL_MXACCEL_BO_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MXACCEL_BO_WAIT, \
		struct drm_mxaccel_bo_wait)
#define DRM_IOCTL_MXACCEL_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MXACCEL_QUEUE_CREATE, \
		 struct drm_mxaccel_queue_create)
#define DRM_IOCTL_MXACCEL_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MXACCEL_QUEUE_DESTROY, \
		struct drm_mxaccel_queue_destroy)
#define DRM_IOCTL_MXACCEL_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MXACCEL_SUBMIT, \
		 struct drm_mxaccel_submit)
#define DRM_IOCTL_MXACCEL_JOB_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MXACCEL_JOB_WAIT, \
		 struct drm_mxaccel_job_wait)

/**
 * enum drm_mxaccel_param - what DRM_IOCTL_MXACCEL_GET_PARAM can report
 *
 * @DRM_MXACCEL_PARAM_UAPI_VERSION: DRM_MXACCEL_UAPI_VERSION of the driver.
 * @DRM_MXACCEL_PARAM_ENGINE_KIND: an enum drm_mxaccel_engine_kind.
 * @DRM_MXACCEL_PARAM_ELEM_MASK: bit (1 << e) set for each supported
 *	enum drm_mxaccel_elem e.
 * @DRM_MXACCEL_PARAM_OP_MASK: bit (1 << k) set for each supported
 *	enum drm_mxaccel_op_kind k.
 * @DRM_MXACCEL_PARAM_SCALE_MODE_MASK: bit (1 << m) for each supported
 *	enum drm_mxaccel_scale_mode m.
 * @DRM_MXACCEL_PARAM_MAX_QUEUES: queues one file may hold.
 *	QUEUE_CREATE beyond it fails with -EBUSY.
 * @DRM_MXACCEL_PARAM_MAX_OPS: ops one SUBMIT may carry.
 * @DRM_MXACCEL_PARAM_MAX_DIM: largest M, N or K of an op.
 * @DRM_MXACCEL_PARAM_MAX_BO_SIZE: largest buffer object, in bytes.
 * @DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS: a job running longer fails with
 *	-ETIMEDOUT and marks its queue guilty.
 * @DRM_MXACCEL_PARAM_OP_SIZE: sizeof(struct drm_mxaccel_op) in the driver.
 * @DRM_MXACCEL_PARAM_RINGS: engine rings of the device.  Each ring runs
 *	one job at a time; a queue's jobs go to the least loaded ring when
 *	the queue is idle, and stay on its ring while it has jobs there.
 * @DRM_MXACCEL_PARAM_QUEUE_DEPTH: jobs one queue may have submitted and
 *	not yet finished; SUBMIT beyond it fails with -EBUSY.
 * @DRM_MXACCEL_PARAM_MAX_DEVICE_QUEUES: queues that may exist on the
 *	device at once, over all files (destroyed queues count until their
 *	last job has finished); QUEUE_CREATE beyond it fails with -EBUSY.
 * @DRM_MXACCEL_PARAM_STATUS_WINDOW: JOB_WAIT reports the status of a
 *	queue's last STATUS_WINDOW jobs; an older seqno fails with -ENODATA.
 * @DRM_MXACCEL_PARAM_INLINE_MAX_WORK: jobs of at most this many block
 *	operations (GEMM: M * N * K / 32 block dot products; QUANTIZE:
 *	M * K / 32 blocks) may run in the submitting thread when nothing
 *	delays them (see &drm_mxaccel_submit); 0 when the device never does.
 * @DRM_MXACCEL_PARAM_DEVICE_MEMORY: bytes of device memory that
 *	DRM_MXACCEL_BO_DEVICE buffer objects come from (version 3); 0 when
 *	the device has none and uses system memory only.
 * @DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES: bit (1 << t) set for each
 *	enum drm_mxaccel_scale_type t that QUANTIZE writes (version 4).
 * @DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES: bit (1 << t) set for each
 *	enum drm_mxaccel_scale_type t that GEMM takes on A and on B, in any
 *	combination (version 4).  A version 3 driver has E8M0 only.
 */
enum drm_mxaccel_param {
	DRM_MXACCEL_PARAM_UAPI_VERSION = 0,
	DRM_MXACCEL_PARAM_ENGINE_KIND = 1,
	DRM_MXACCEL_PARAM_ELEM_MASK = 2,
	DRM_MXACCEL_PARAM_OP_MASK = 3,
	DRM_MXACCEL_PARAM_SCALE_MODE_MASK = 4,
	DRM_MXACCEL_PARAM_MAX_QUEUES = 5,
	DRM_MXACCEL_PARAM_MAX_OPS = 6,
	DRM_MXACCEL_PARAM_MAX_DIM = 7,
	DRM_MXACCEL_PARAM_MAX_BO_SIZE = 8,
	DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS = 9,
	DRM_MXACCEL_PARAM_OP_SIZE = 10,
	DRM_MXACCEL_PARAM_RINGS = 11,
	DRM_MXACCEL_PARAM_QUEUE_DEPTH = 12,
	DRM_MXACCEL_PARAM_MAX_DEVICE_QUEUES = 13,
	DRM_MXACCEL_PARAM_STATUS_WINDOW = 14,
	DRM_MXACCEL_PARAM_INLINE_MAX_WORK = 15,
	DRM_MXACCEL_PARAM_DEVICE_MEMORY = 16,
	DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES = 17,
	DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES = 18,
};

/**
 * enum drm_mxaccel_engine_kind - what executes jobs
 *
 * @DRM_MXACCEL_ENGINE_SOFTWARE: the exact software engine (no hardware);
 *	a conformance device, bit-identical to libmxaccel's EMULATED kernels.
 * @DRM_MXACCEL_ENGINE_HARDWARE: an accelerator.
 */
enum drm_mxaccel_engine_kind {
	DRM_MXACCEL_ENGINE_SOFTWARE = 0,
	DRM_MXACCEL_ENGINE_HARDWARE = 1,
};

/**
 * enum drm_mxaccel_elem - MX element types (OCP MX v1.0)
 *
 * @DRM_MXACCEL_ELEM_E4M3: MXFP8 e4m3, one per byte.
 * @DRM_MXACCEL_ELEM_E5M2: MXFP8 e5m2, one per byte.
 * @DRM_MXACCEL_ELEM_E2M3: MXFP6 e2m3, one per byte in the low 6 bits.
 * @DRM_MXACCEL_ELEM_E3M2: MXFP6 e3m2, one per byte in the low 6 bits.
 * @DRM_MXACCEL_ELEM_E2M1: MXFP4, two per byte, element 2i in the low nibble.
 */
enum drm_mxaccel_elem {
	DRM_MXACCEL_ELEM_E4M3 = 1,
	DRM_MXACCEL_ELEM_E5M2 = 2,
	DRM_MXACCEL_ELEM_E2M3 = 3,
	DRM_MXACCEL_ELEM_E3M2 = 4,
	DRM_MXACCEL_ELEM_E2M1 = 5,
};

/**
 * enum drm_mxaccel_scale_type - what a block's scale byte is (version 4)
 *
 * @DRM_MXACCEL_SCALE_TYPE_E8M0: OCP MX: 2^(s - 127), 0xff is NaN; blocks
 *	of 32 elements.  Every element type.
 * @DRM_MXACCEL_SCALE_TYPE_UE4M3: NVFP4: a float8_e4m3fn with the sign
 *	bit clear; blocks of 16 elements; DRM_MXACCEL_ELEM_E2M1 only.
 *	An operand with UE4M3 scales may also have an fp32 per-tensor
 *	scale (&drm_mxaccel_block_scale.tensor_scale).
 */
enum drm_mxaccel_scale_type {
	DRM_MXACCEL_SCALE_TYPE_E8M0 = 0,
	DRM_MXACCEL_SCALE_TYPE_UE4M3 = 1,
};

/**
 * enum drm_mxaccel_scale_layout - where the scale of (row, block) is
 *
 * @DRM_MXACCEL_LAYOUT_PLAIN: row-major, scale_stride bytes between rows.
 * @DRM_MXACCEL_LAYOUT_SWIZZLED: the cuBLAS/torchao 128x4 tiled layout;
 *	scale_stride must be 0.
 */
enum drm_mxaccel_scale_layout {
	DRM_MXACCEL_LAYOUT_PLAIN = 0,
	DRM_MXACCEL_LAYOUT_SWIZZLED = 1,
};

/**
 * enum drm_mxaccel_scale_mode - how QUANTIZE derives a block's scale
 *
 * @DRM_MXACCEL_SCALE_FLOOR: torchao FLOOR.
 * @DRM_MXACCEL_SCALE_RCEIL: torchao RCEIL.
 * @DRM_MXACCEL_SCALE_CEIL: torchao CEIL.
 * @DRM_MXACCEL_SCALE_EVEN: torchao EVEN.
 * @DRM_MXACCEL_SCALE_NVFP4: torchao nvfp4_quantize() (version 4): the
 *	block scale is amax / 6 (divided by the per-tensor scale when there
 *	is one) rounded to UE4M3.  The one mode of UE4M3 destinations, and
 *	only of them; FLOOR .. EVEN are E8M0's.
 */
enum drm_mxaccel_scale_mode {
	DRM_MXACCEL_SCALE_FLOOR = 0,
	DRM_MXACCEL_SCALE_RCEIL = 1,
	DRM_MXACCEL_SCALE_CEIL = 2,
	DRM_MXACCEL_SCALE_EVEN = 3,
	DRM_MXACCEL_SCALE_NVFP4 = 4,
};

/**
 * enum drm_mxaccel_dtype - dense element types
 *
 * @DRM_MXACCEL_DTYPE_F32: IEEE binary32.
 * @DRM_MXACCEL_DTYPE_BF16: bfloat16.
 */
enum drm_mxaccel_dtype {
	DRM_MXACCEL_DTYPE_F32 = 0,
	DRM_MXACCEL_DTYPE_BF16 = 1,
};

/**
 * struct drm_mxaccel_get_param - query a device parameter
 * @param: Input: an enum drm_mxaccel_param.  Unknown: -EINVAL.
 * @pad: Input: must be zero.
 * @value: Output: the value.
 */
struct drm_mxaccel_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/**
 * struct drm_mxaccel_bo_create - create a buffer object
 * @size: Input: bytes, > 0 and <= DRM_MXACCEL_PARAM_MAX_BO_SIZE (else
 *	-EINVAL / -E2BIG); rounded up to whole pages.  -ENOMEM, or -ENOSPC
 *	from shmem, when there is no memory for the object.
 * @flags: Input: where the buffer lives: DRM_MXACCEL_BO_SYSTEM,
 *	DRM_MXACCEL_BO_DEVICE, or 0 for the device's choice (device memory
 *	where it has any, else system memory).  A device without device
 *	memory rejects DRM_MXACCEL_BO_DEVICE with -EINVAL; a device whose
 *	engine reaches only its own memory (a PCI engine without DMA,
 *	Documentation/pci-device.rst) accepts system-memory objects but
 *	rejects them at SUBMIT with -EINVAL.  Device memory that is full
 *	gives -ENOSPC.  Other bits, or both: -EINVAL.
 * @handle: Output: GEM handle, private to this file.
 * @mmap_offset: Output: offset to mmap() the buffer at on this file.
 */
/* BO_CREATE placement flags (version 3) */
#define DRM_MXACCEL_BO_SYSTEM		(1u << 0)
#define DRM_MXACCEL_BO_DEVICE		(1u << 1)

struct drm_mxaccel_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 mmap_offset;
};

/**
 * struct drm_mxaccel_bo_info - describe a buffer object
 * @handle: Input: GEM handle (-ENOENT if unknown to this file).
 * @pad: Input: must be zero.
 * @size: Output: bytes.
 * @mmap_offset: Output: offset to mmap() the buffer at.
 */
struct drm_mxaccel_bo_info {
	__u32 handle;
	__u32 pad;
	__u64 size;
	__u64 mmap_offset;
};

/**
 * struct drm_mxaccel_bo_wait - wait until no job uses a buffer object
 * @handle: Input: GEM handle (-ENOENT if unknown).
 * @pad: Input: must be zero.
 * @timeout_ns: Input: absolute CLOCK_MONOTONIC deadline; -ETIMEDOUT if it
 *	passes first.  0 polls.
 */
struct drm_mxaccel_bo_wait {
	__u32 handle;
	__u32 pad;
	__s64 timeout_ns;
};

/**
 * enum drm_mxaccel_queue_priority - scheduling priority of a queue
 *
 * @DRM_MXACCEL_PRIORITY_NORMAL: the default.
 * @DRM_MXACCEL_PRIORITY_LOW: runs when no normal or high queue of its
 *	ring has a job ready.
 * @DRM_MXACCEL_PRIORITY_HIGH: runs before normal and low queues of its
 *	ring; needs CAP_SYS_NICE (-EPERM otherwise).
 */
enum drm_mxaccel_queue_priority {
	DRM_MXACCEL_PRIORITY_NORMAL = 0,
	DRM_MXACCEL_PRIORITY_LOW = 1,
	DRM_MXACCEL_PRIORITY_HIGH = 2,
};

/**
 * struct drm_mxaccel_queue_create - create a job queue
 * @flags: Input: must be zero.
 * @queue_id: Output: queue id, private to this file.  Ids are handed out
 *	cyclically from 1: an id is not reused until 2^32 - 1 further queues
 *	of the file have been created.  -EBUSY if the file holds
 *	DRM_MXACCEL_PARAM_MAX_QUEUES queues or the device
 *	DRM_MXACCEL_PARAM_MAX_DEVICE_QUEUES.
 * @syncobj: Output: handle of the queue's timeline syncobj; point N
 *	signals when the queue's job N (the seqno SUBMIT returned) is done.
 *	It belongs to the file; destroying the queue does not destroy it.
 * @priority: Input: an enum drm_mxaccel_queue_priority (-EINVAL if
 *	unknown).  Old callers that left it zero (it was padding in version
 *	1) get DRM_MXACCEL_PRIORITY_NORMAL.
 */
struct drm_mxaccel_queue_create {
	__u32 flags;
	__u32 queue_id;
	__u32 syncobj;
	__u32 priority;
};

/**
 * struct drm_mxaccel_queue_destroy - destroy a queue
 * @queue_id: Input: queue id (-ENOENT if unknown).  Jobs of the queue
 *	still queued or running are canceled: they finish with -ECANCELED
 *	(a running job stops within a few microseconds of engine work).
 *	The ioctl does not wait for that: the queue's fences signal when
 *	its jobs have stopped.
 * @pad: Input: must be zero.
 */
struct drm_mxaccel_queue_destroy {
	__u32 queue_id;
	__u32 pad;
};

/**
 * struct drm_mxaccel_mx_operand - a block-scaled matrix in buffer objects
 * @data_handle: GEM handle of the element codes.
 * @scale_handle: GEM handle of the block scales (may equal data_handle);
 *	their type is the op's &drm_mxaccel_block_scale of this operand
 *	(E8M0 for callers that do not know it).
 * @data_offset: byte offset of row 0.
 * @data_stride: bytes between rows; 0 means packed.  Must hold a row.
 * @scale_offset: byte offset of the scales.
 * @scale_stride: bytes between rows of scales (plain layout; 0 means
 *	packed); must be 0 for the swizzled layout.
 * @elem: an enum drm_mxaccel_elem.
 * @scale_layout: an enum drm_mxaccel_scale_layout.  Swizzled scales
 *	of a UE4M3 operand tile its [rows][k / 16] scale matrix.
 */
struct drm_mxaccel_mx_operand {
	__u32 data_handle;
	__u32 scale_handle;
	__u64 data_offset;
	__u64 data_stride;
	__u64 scale_offset;
	__u64 scale_stride;
	__u32 elem;
	__u32 scale_layout;
};

/**
 * struct drm_mxaccel_dense_operand - an fp32 or bf16 matrix
 * @handle: GEM handle.
 * @dtype: an enum drm_mxaccel_dtype.
 * @offset: byte offset of row 0, a multiple of the element size.
 * @stride: bytes between rows (0 means packed), a multiple of the element
 *	size.
 */
struct drm_mxaccel_dense_operand {
	__u32 handle;
	__u32 dtype;
	__u64 offset;
	__u64 stride;
};

/**
 * struct drm_mxaccel_block_scale - how an operand's blocks are scaled
 *	(version 4)
 * @scale_type: an enum drm_mxaccel_scale_type.  Unknown: -EINVAL; UE4M3
 *	with an element type other than E2M1: -EINVAL; a type the engine
 *	does not run for the op (DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES,
 *	DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES): -EINVAL.
 * @block_size: elements per scale.  0 means the scale type's own (32
 *	for E8M0, 16 for UE4M3), the only size each type has; any other
 *	value than that: -EINVAL.  K must be a multiple of it (-EINVAL).
 * @tensor_scale: UE4M3 only: the IEEE binary32 bit pattern of the
 *	per-tensor scale of two-level NVFP4 (an element's value is code *
 *	block scale * tensor_scale; QUANTIZE divides by it), or 0 for
 *	single-level scaling.  It must be a positive finite float (bits
 *	0x00000001 to 0x7f7fffff, subnormals included): -EINVAL otherwise.
 *	Non-zero with E8M0 scales: -EINVAL.
 * @pad: must be zero (-EINVAL).
 *
 * A caller that passes the version 1 to 3 &drm_mxaccel_op (op_size
 * DRM_MXACCEL_OP_SIZE_V1) gets these zeroed: E8M0 scales in blocks of 32,
 * as those versions had.
 */
struct drm_mxaccel_block_scale {
	__u32 scale_type;
	__u32 block_size;
	__u32 tensor_scale;
	__u32 pad;
};

/**
 * enum drm_mxaccel_op_kind - operations
 *
 * @DRM_MXACCEL_OP_GEMM: C[M x N] (+)= A[M x K] * B[N x K]^T, exact
 *	semantics (Documentation/numerics.rst) on the software engine.
 * @DRM_MXACCEL_OP_QUANTIZE: A[M x K] (MX) = quantize(C[M x K] dense),
 *	bit-exact with torchao's to_mx(), or with nvfp4_quantize() for a
 *	UE4M3 destination (version 4).  A swizzled destination's padding
 *	scales are written as zero.
 */
enum drm_mxaccel_op_kind {
	DRM_MXACCEL_OP_GEMM = 1,
	DRM_MXACCEL_OP_QUANTIZE = 2,
};

/* C += A * B^T instead of C = A * B^T. */
#define DRM_MXACCEL_OP_ACCUMULATE	(1u << 0)
/*
 * GEMM: compute the exact result (Documentation/numerics.rst) even on an
 * engine whose own kernels are not exact (version 3).  The software
 * engine is always exact; a hardware engine (DRM_MXACCEL_ENGINE_HARDWARE)
 * without this flag rounds within its stated bound.
 */
#define DRM_MXACCEL_OP_EXACT		(1u << 1)

/**
 * struct drm_mxaccel_op - one operation of a SUBMIT
 * @kind: an enum drm_mxaccel_op_kind.
 * @flags: DRM_MXACCEL_OP_* flags (GEMM only; must be 0 for QUANTIZE).
 * @m: rows of A and C, 1..DRM_MXACCEL_PARAM_MAX_DIM.
 * @n: rows of B and columns of C for GEMM; must be 0 for QUANTIZE.
 * @k: columns of A and B, 1..MAX_DIM, a multiple of the block size of
 *	each MX operand (32, or 16 for UE4M3 scales).
 * @scale_mode: QUANTIZE: an enum drm_mxaccel_scale_mode, NVFP4 for a
 *	UE4M3 destination and FLOOR .. EVEN for an E8M0 one (-EINVAL
 *	otherwise); GEMM: must be 0.
 * @a: GEMM: the A operand; QUANTIZE: the MX destination.
 * @b: GEMM: the B operand; QUANTIZE: must be all zero.
 * @c: GEMM: the C output (and input with ACCUMULATE); QUANTIZE: the dense
 *	source.
 * @reserved: must be zero.
 * @a_scale: the scaling of @a (version 4).
 * @b_scale: the scaling of @b (version 4); QUANTIZE: must be all zero.
 *
 * Version 4 grew the struct by @a_scale and @b_scale.  SUBMIT takes the
 * version 1 to 3 struct as well (op_size DRM_MXACCEL_OP_SIZE_V1): the
 * driver reads the fields the caller knows and zero-fills the rest.
 *
 * Every extent must lie inside its buffer object (-EINVAL, or -EOVERFLOW
 * when the arithmetic overflows), and outputs must not overlap inputs in
 * the same buffer object (-EINVAL).
 */
struct drm_mxaccel_op {
	__u32 kind;
	__u32 flags;
	__u32 m;
	__u32 n;
	__u32 k;
	__u32 scale_mode;
	struct drm_mxaccel_mx_operand a;
	struct drm_mxaccel_mx_operand b;
	struct drm_mxaccel_dense_operand c;
	__u64 reserved[2];
	struct drm_mxaccel_block_scale a_scale;
	struct drm_mxaccel_block_scale b_scale;
};

/* sizeof(struct drm_mxaccel_op) in versions 1 to 3: the smallest op_size. */
#define DRM_MXACCEL_OP_SIZE_V1		160

/**
 * struct drm_mxaccel_sync - a syncobj point
 * @handle: syncobj handle.
 * @pad: must be zero.
 * @point: timeline point, or 0 for a binary syncobj.
 */
struct drm_mxaccel_sync {
	__u32 handle;
	__u32 pad;
	__u64 point;
};

/* SUBMIT flags */
/* Wait for the job in the same ioctl, until @wait_timeout_ns. */
#define DRM_MXACCEL_SUBMIT_WAIT		(1u << 0)
/* Never run the job in the submitting thread (see below). */
#define DRM_MXACCEL_SUBMIT_NO_INLINE	(1u << 1)

/* SUBMIT out_flags */
/* The job is done; @status holds its status. */
#define DRM_MXACCEL_SUBMIT_OUT_DONE	(1u << 0)
/* The job ran in the submitting thread. */
#define DRM_MXACCEL_SUBMIT_OUT_INLINE	(1u << 1)

/**
 * struct drm_mxaccel_submit - queue a job of one or more operations
 * @queue_id: Input: queue (-ENOENT if unknown).
 * @flags: Input: DRM_MXACCEL_SUBMIT_* flags; unknown bits: -EINVAL.
 * @ops: Input: user pointer to @op_count operations, @op_size bytes apart.
 * @op_count: Input: 1..DRM_MXACCEL_PARAM_MAX_OPS (else -EINVAL / -E2BIG).
 * @op_size: Input: sizeof(struct drm_mxaccel_op) as the caller knows it.
 *	Smaller than the first version's struct (DRM_MXACCEL_OP_SIZE_V1):
 *	-EINVAL; larger than
 *	DRM_MXACCEL_MAX_ELEM_SIZE: -E2BIG; bytes past what the driver knows
 *	must be zero (-E2BIG otherwise).
 * @in_syncs: Input: user pointer to @in_sync_count struct drm_mxaccel_sync
 *	the job waits for (from any queue or device).  Each point must have
 *	a fence already (-EINVAL otherwise: there is no wait-for-submit);
 *	-ENOENT for an unknown syncobj.  A job whose dependency (an in_sync,
 *	or an earlier writer of a buffer object it reads) fails after the
 *	job was submitted does not run: it fails with -ECANCELED.  One that
 *	had failed already when the job was submitted does not cancel it.
 * @in_sync_count: Input: at most 64 (-E2BIG).
 * @sync_size: Input: sizeof(struct drm_mxaccel_sync) as the caller knows
 *	it; ignored when @in_sync_count is 0.  Smaller than the first
 *	version's struct: -EINVAL; larger than DRM_MXACCEL_MAX_ELEM_SIZE:
 *	-E2BIG; bytes past what the driver knows must be zero (-E2BIG).
 * @out_sync: Input: an extra syncobj point to signal on completion;
 *	handle 0 for none (then point must be 0 too: -EINVAL).
 * @seqno: Output: the job's sequence number on this queue; the queue's
 *	timeline syncobj signals point @seqno when the job is done.
 * @reserved: must be zero.
 * @wait_timeout_ns: Input: with DRM_MXACCEL_SUBMIT_WAIT, an absolute
 *	CLOCK_MONOTONIC deadline for the wait (0 does not wait); must be 0
 *	without it (-EINVAL).
 * @status: Output: with DRM_MXACCEL_SUBMIT_OUT_DONE, the job's status as
 *	DRM_IOCTL_MXACCEL_JOB_WAIT reports it; else 0.
 * @out_flags: Output: DRM_MXACCEL_SUBMIT_OUT_* flags.
 *
 * All operations are validated before anything is queued; on error nothing
 * is queued.  Operations of one job run in order, and the jobs of a queue
 * run and finish in submission order.  A queue that had a job time out is
 * guilty: its later jobs fail with -ECANCELED.  -EBUSY: the queue has
 * DRM_MXACCEL_PARAM_QUEUE_DEPTH jobs unfinished.
 *
 * A small job (DRM_MXACCEL_PARAM_INLINE_MAX_WORK) whose queue is idle and
 * whose dependencies have all signalled may run in the submitting thread,
 * before SUBMIT returns (DRM_MXACCEL_SUBMIT_OUT_INLINE); it is published
 * on the timeline, @out_sync and the buffer objects' reservations like any
 * other job.  With DRM_MXACCEL_SUBMIT_WAIT, SUBMIT waits for the job once
 * it is queued: the ioctl succeeds whether or not the job finished by the
 * deadline or a signal came first (then DRM_MXACCEL_SUBMIT_OUT_DONE is
 * clear and DRM_IOCTL_MXACCEL_JOB_WAIT can wait for @seqno): a queued job
 * is never queued twice by a restarted ioctl.
 */
struct drm_mxaccel_submit {
	__u32 queue_id;
	__u32 flags;
	__u64 ops;
	__u32 op_count;
	__u32 op_size;
	__u64 in_syncs;
	__u32 in_sync_count;
	__u32 sync_size;
	struct drm_mxaccel_sync out_sync;
	__u64 seqno;
	__u64 reserved;
	__s64 wait_timeout_ns;
	__s32 status;
	__u32 out_flags;
};

/**
 * struct drm_mxaccel_job_wait - wait for a job and read its status
 * @queue_id: Input: queue (-ENOENT if unknown).
 * @flags: Input: must be zero.
 * @seqno: Input: sequence number from SUBMIT (-EINVAL if never issued,
 *	-ENODATA if older than the queue's last
 *	DRM_MXACCEL_PARAM_STATUS_WINDOW jobs).
 * @timeout_ns: Input: absolute CLOCK_MONOTONIC deadline; 0 polls.  The
 *	ioctl fails with -ETIMEDOUT if the job is still running then.
 * @status: Output: 0 if the job succeeded, else its negative errno
 *	(-ETIMEDOUT: it ran past the job timeout and was stopped;
 *	-ECANCELED: its queue was guilty or destroyed, or a job it
 *	depended on failed).
 * @pad: Input: must be zero.
 */
struct drm_mxaccel_job_wait {
	__u32 queue_id;
	__u32 flags;
	__u64 seqno;
	__s64 timeout_ns;
	__s32 status;
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_MXACCEL_ACCEL_H_ */
