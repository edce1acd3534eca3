// SPDX-License-Identifier: MIT
/*
 * mxaccel info: what this library build can do here.  Version, backends
 * (and why one is unavailable), every device that opens, and a capability
 * table from mxa_query() so that a user or a framework can see which
 * requests run natively, which only emulated, and why.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel info [--json]\n"
"\n"
"Prints the library version, its backends, and for every device that\n"
"opens its description and which GEMM element pairs, quantize recipes and\n"
"dequantize element types run natively or emulated.\n"
"\n"
"  --json              one JSON object instead of text\n";

/* Capabilities are asked for one representative shape. */
#define INFO_DIM 256

static const enum mxa_pref info_prefs[] = {
	MXA_PREF_NATIVE, MXA_PREF_EMULATED, MXA_PREF_AUTO,
};

#define N_PREFS ARRAY_SIZE(info_prefs)
#define ELEM_FIRST MXA_ELEM_E4M3
#define ELEM_LAST MXA_ELEM_E2M1

struct info_out {
	bool json;
	struct cli_json j;
};

/* One request under every preference: a JSON object or a table row. */
static void show_caps(struct info_out *o, struct mxa_device *dev,
		      const struct mxa_op_desc *desc, const char *label)
{
	struct mxa_capability cap[N_PREFS];
	int err[N_PREFS];
	size_t i;

	for (i = 0; i < N_PREFS; i++) {
		memset(&cap[i], 0, sizeof(cap[i]));
		err[i] = mxa_query(dev, desc, info_prefs[i], &cap[i]);
		if (err[i])
			snprintf(cap[i].reason, sizeof(cap[i].reason),
				 "mxa_query: %s", mxa_strerror(err[i]));
	}
	if (o->json) {
		for (i = 0; i < N_PREFS; i++) {
			cli_json_object(&o->j, mxa_pref_name(info_prefs[i]));
			cli_json_str(&o->j, "support", err[i] ? "error" :
				     mxa_support_name(cap[i].support));
			cli_json_str(&o->j, "kernel", cap[i].kernel);
			cli_json_str(&o->j, "reason", cap[i].reason);
			cli_json_end(&o->j);
		}
		return;
	}
	printf("    %-22s", label);
	for (i = 0; i < N_PREFS; i++) {
		const char *cell = cap[i].kernel;

		if (err[i])
			cell = "(error)";
		else if (cap[i].support == MXA_SUPPORT_NONE)
			cell = "-";
		/* Pad every column but the last: no trailing blanks. */
		printf(" %-*s", i + 1 < N_PREFS ? 18 : 0, cell);
	}
	putchar('\n');
	/* Only the refusals need explaining; the rest is the kernel name. */
	for (i = 0; i < N_PREFS; i++)
		if (err[i] || cap[i].support == MXA_SUPPORT_NONE)
			printf("      %s: %s\n", mxa_pref_name(info_prefs[i]),
			       cap[i].reason);
}

static void table_header(struct info_out *o, const char *title)
{
	size_t i;

	if (o->json) {
		cli_json_array(&o->j, title);
		return;
	}
	printf("  %-24s", title);
	for (i = 0; i < N_PREFS; i++)
		printf(" %-*s", i + 1 < N_PREFS ? 18 : 0,
		       mxa_pref_name(info_prefs[i]));
	putchar('\n');
}

static void show_gemm(struct info_out *o, struct mxa_device *dev)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_GEMM, .dtype = MXA_DTYPE_F32,
		.m = INFO_DIM, .n = INFO_DIM, .k = INFO_DIM,
	};
	char label[64];
	int a, b;

	table_header(o, "gemm");
	for (a = ELEM_FIRST; a <= ELEM_LAST; a++) {
		for (b = ELEM_FIRST; b <= ELEM_LAST; b++) {
			desc.a_elem = a;
			desc.b_elem = b;
			snprintf(label, sizeof(label), "%s x %s",
				 mxa_elem_name(a), mxa_elem_name(b));
			if (o->json) {
				cli_json_object(&o->j, NULL);
				cli_json_str(&o->j, "a", mxa_elem_name(a));
				cli_json_str(&o->j, "b", mxa_elem_name(b));
			}
			show_caps(o, dev, &desc, label);
			if (o->json)
				cli_json_end(&o->j);
		}
	}
	if (o->json)
		cli_json_end(&o->j);
}

static void show_quantize(struct info_out *o, struct mxa_device *dev)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_QUANTIZE, .dtype = MXA_DTYPE_F32,
		.m = INFO_DIM, .k = INFO_DIM,
	};
	struct mxa_recipe r;
	const char *name;
	char label[64];
	unsigned int i;

	table_header(o, "quantize");
	for (i = 0; (name = mxa_recipe_at(i)); i++) {
		if (mxa_recipe_parse(name, &r))
			continue;
		desc.a_elem = r.elem;
		desc.b_elem = r.elem;
		desc.mode = r.mode;
		desc.a_scale_type = r.scale_type;
		snprintf(label, sizeof(label), "%s", name);
		if (o->json) {
			cli_json_object(&o->j, NULL);
			cli_json_str(&o->j, "recipe", name);
			cli_json_str(&o->j, "elem", mxa_elem_name(r.elem));
			cli_json_str(&o->j, "mode", mxa_scale_mode_name(r.mode));
			cli_json_str(&o->j, "scale_type",
				     mxa_scale_type_name(r.scale_type));
		}
		show_caps(o, dev, &desc, label);
		if (o->json)
			cli_json_end(&o->j);
	}
	if (o->json)
		cli_json_end(&o->j);
}

static void show_dequantize(struct info_out *o, struct mxa_device *dev)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_DEQUANTIZE, .dtype = MXA_DTYPE_F32,
		.m = INFO_DIM, .k = INFO_DIM,
	};
	int e;

	table_header(o, "dequantize");
	for (e = ELEM_FIRST; e <= ELEM_LAST; e++) {
		desc.a_elem = e;
		desc.b_elem = e;
		if (o->json) {
			cli_json_object(&o->j, NULL);
			cli_json_str(&o->j, "elem", mxa_elem_name(e));
		}
		show_caps(o, dev, &desc, mxa_elem_name(e));
		if (o->json)
			cli_json_end(&o->j);
	}
	if (o->json)
		cli_json_end(&o->j);
}

static void show_device(struct info_out *o, const char *name)
{
	struct mxa_device_info di;
	struct mxa_device *dev;
	int ret;

	ret = mxa_device_open(name, &dev);
	if (!ret) {
		memset(&di, 0, sizeof(di));
		ret = mxa_device_info(dev, &di);
		if (ret)
			mxa_device_close(dev);
	}
	if (ret) {
		if (o->json) {
			cli_json_object(&o->j, NULL);
			cli_json_str(&o->j, "name", name);
			cli_json_str(&o->j, "error", mxa_strerror(ret));
			cli_json_end(&o->j);
		} else {
			printf("\ndevice %s: cannot open: %s\n", name,
			       mxa_strerror(ret));
		}
		return;
	}

	if (o->json) {
		cli_json_object(&o->j, NULL);
		cli_json_str(&o->j, "name", di.name);
		cli_json_str(&o->j, "backend", di.backend);
		cli_json_str(&o->j, "description", di.description);
		cli_json_uint(&o->j, "threads", di.threads);
		cli_json_bool(&o->j, "host_visible", di.host_visible);
		cli_json_bool(&o->j, "conformance", di.conformance);
	} else {
		printf("\ndevice %s (backend %s): %s\n", di.name, di.backend,
		       di.description);
		printf("  threads %u, host visible %s%s\n", di.threads,
		       di.host_visible ? "yes" : "no",
		       di.conformance ?
		       ", conformance device (emulated only, never chosen by auto)" :
		       "");
		printf("  capabilities for %ux%ux%u, fp32 (kernel that runs, or - when refused):\n",
		       INFO_DIM, INFO_DIM, INFO_DIM);
	}
	show_gemm(o, dev);
	show_quantize(o, dev);
	show_dequantize(o, dev);
	if (o->json)
		cli_json_end(&o->j);
	mxa_device_close(dev);
}

/*
 * Device names follow from the backend: the single "cpu", and "<backend>:N"
 * for the others (the API has no device enumeration of its own).
 */
static void show_devices(struct info_out *o)
{
	struct mxa_backend_info bi;
	unsigned int i, d, n = mxa_backend_count();
	char name[MXA_NAME_MAX + 16];

	if (o->json)
		cli_json_array(&o->j, "devices");
	for (i = 0; i < n; i++) {
		memset(&bi, 0, sizeof(bi));
		if (mxa_backend_info(i, &bi) || !bi.available)
			continue;
		for (d = 0; d < bi.devices; d++) {
			if (!strcmp(bi.name, "cpu") && bi.devices == 1)
				snprintf(name, sizeof(name), "%s", bi.name);
			else
				snprintf(name, sizeof(name), "%s:%u", bi.name,
					 d);
			show_device(o, name);
		}
	}
	if (o->json)
		cli_json_end(&o->j);
}

static void show_backends(struct info_out *o)
{
	struct mxa_backend_info bi;
	unsigned int i, n = mxa_backend_count();
	int ret;

	if (o->json)
		cli_json_array(&o->j, "backends");
	else
		printf("backends:\n");
	for (i = 0; i < n; i++) {
		memset(&bi, 0, sizeof(bi));
		ret = mxa_backend_info(i, &bi);
		if (ret)
			snprintf(bi.reason, sizeof(bi.reason),
				 "mxa_backend_info: %s", mxa_strerror(ret));
		if (o->json) {
			cli_json_object(&o->j, NULL);
			cli_json_str(&o->j, "name", bi.name);
			cli_json_uint(&o->j, "devices", bi.devices);
			cli_json_bool(&o->j, "available", !ret && bi.available);
			cli_json_str(&o->j, "reason", bi.reason);
			cli_json_end(&o->j);
		} else if (!ret && bi.available) {
			printf("  %-8s %u device%s\n", bi.name, bi.devices,
			       bi.devices == 1 ? "" : "s");
		} else {
			printf("  %-8s unavailable: %s\n", bi.name, bi.reason);
		}
	}
	if (o->json)
		cli_json_end(&o->j);
}

static void show_default(struct info_out *o)
{
	struct mxa_device_info di;
	struct mxa_device *dev;
	int ret;

	memset(&di, 0, sizeof(di));
	ret = mxa_device_open(NULL, &dev);
	if (!ret) {
		ret = mxa_device_info(dev, &di);
		mxa_device_close(dev);
	}
	if (o->json)
		cli_json_str(&o->j, "default_device",
			     ret ? NULL : di.name);
	else if (ret)
		printf("default device: cannot open: %s\n", mxa_strerror(ret));
	else
		printf("default device: %s\n", di.name);
}

int cmd_info(int argc, char **argv)
{
	struct info_out o = { 0 };
	struct cli_opt opts[] = {
		CLI_OPTION("json", CLI_FLAG, &o.json),
		CLI_END,
	};
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;

	if (o.json) {
		cli_json_init(&o.j, stdout);
		cli_json_object(&o.j, NULL);
		cli_json_str(&o.j, "version", mxa_version());
		cli_json_uint(&o.j, "block_size", MXA_BLOCK_SIZE);
		cli_json_uint(&o.j, "query_dim", INFO_DIM);
	} else {
		printf("libmxaccel %s\n", mxa_version());
	}
	show_default(&o);
	show_backends(&o);
	show_devices(&o);
	if (o.json)
		cli_json_end(&o.j);
	return fflush(stdout) ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}
