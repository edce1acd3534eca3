// SPDX-License-Identifier: GPL-2.0
/*
 * MX PCI devices (hw/mxaccel_pci.h): bind, check the device's header, map
 * its BARs, set up MSI-X and say hello; on removal, unplug the DRM device
 * first and let it live on until its last file closes.
 *
 * Version 1 devices are ivshmem-doorbell functions (1af4:1110) whose
 * memory BAR starts with the MX header: other users of ivshmem are left
 * alone (-ENODEV, no message above debug level).
 */
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "mxaccel_drv.h"
#include "mxaccel_pci_drv.h"
#include "mxaccel_pci_engine.h"
#include "mxaccel_params.h"
#include "mxaccel_vram.h"

struct mxaccel_pci {
	struct mxaccel_device *mdev;
	struct mxaccel_pci_engine *pe;
	int irqs[1 + MXHW_MAX_RINGS];
	unsigned int n_irqs;
};

/* A region [off, off + len) inside the BAR, aligned to align. */
static bool region_ok(u64 off, u64 len, u64 bar, u64 align)
{
	return len && IS_ALIGNED(off, align) && off < bar && len <= bar - off;
}

/*
 * Read what the header states once, into lay, and check the copy: the
 * driver uses only values it checked (the device could change BAR2 at
 * any time), and trusts no size or offset outside the BAR.
 */
static int read_header(struct pci_dev *pdev, void __iomem *mem, u64 bar,
		       struct mxaccel_pci_layout *lay)
{
	const struct mxhw_header __iomem *hdr = mem;
	u32 major, hsize;
	u64 ring_bytes;

	major = readw(&hdr->version_major);
	hsize = readl(&hdr->header_size);
	if (major != MXHW_VERSION_MAJOR) {
		dev_err(&pdev->dev, "MX device interface version %u; this driver knows %u\n",
			major, MXHW_VERSION_MAJOR);
		return -ENODEV;
	}
	if (hsize < sizeof(struct mxhw_header) || hsize > bar) {
		dev_err(&pdev->dev, "header_size %u below %zu\n", hsize,
			sizeof(struct mxhw_header));
		return -ENODEV;
	}
	lay->peer = readl(&hdr->device_peer);
	lay->n_rings = readl(&hdr->n_rings);
	lay->depth = readl(&hdr->ring_depth);
	lay->desc_size = readl(&hdr->desc_size);
	lay->cpl_size = readl(&hdr->cpl_size);
	lay->max_dim = readl(&hdr->max_dim);
	lay->offset_align = readl(&hdr->offset_align);
	lay->elem_mask = readq(&hdr->elem_mask);
	lay->op_mask = readq(&hdr->op_mask);
	lay->mode_mask = readq(&hdr->mode_mask);
	lay->ctrl = readq(&hdr->ctrl_offset);
	lay->rings = readq(&hdr->ring_offset);
	lay->stride = readq(&hdr->ring_stride);
	lay->heap = readq(&hdr->heap_offset);
	lay->heap_size = readq(&hdr->heap_size);
	lay->test = readq(&hdr->test_offset);
	memcpy_fromio(lay->name, hdr->name, sizeof(lay->name) - 1);
	lay->name[sizeof(lay->name) - 1] = '\0';

	if (!lay->n_rings || lay->n_rings > MXHW_MAX_RINGS ||
	    lay->n_rings > MXACCEL_MAX_RINGS || lay->depth < 2 ||
	    lay->depth > MXHW_MAX_RING_DEPTH || !is_power_of_2(lay->depth) ||
	    lay->desc_size < sizeof(struct mxhw_desc) || lay->desc_size % 8 ||
	    lay->cpl_size < sizeof(struct mxhw_cpl) || lay->cpl_size % 8 ||
	    !lay->offset_align || !is_power_of_2(lay->offset_align) ||
	    lay->offset_align > PAGE_SIZE) {
		dev_err(&pdev->dev, "bad ring geometry: %u rings of %u, descriptors %u, records %u bytes, alignment %u\n",
			lay->n_rings, lay->depth, lay->desc_size,
			lay->cpl_size, lay->offset_align);
		return -ENODEV;
	}
	ring_bytes = mxhw_ring_cq_offset(lay->depth, lay->desc_size) +
		     (u64)lay->depth * lay->cpl_size;
	if (!region_ok(lay->ctrl, sizeof(struct mxhw_ctrl), bar, PAGE_SIZE) ||
	    lay->stride < ring_bytes || !IS_ALIGNED(lay->stride, PAGE_SIZE) ||
	    !region_ok(lay->rings, lay->stride * lay->n_rings, bar, PAGE_SIZE) ||
	    !region_ok(lay->heap, lay->heap_size, bar, SZ_2M) ||
	    !IS_ALIGNED(lay->heap_size, PAGE_SIZE) ||
	    (lay->test && !region_ok(lay->test, sizeof(struct mxhw_test), bar,
				     PAGE_SIZE)) ||
	    lay->heap < lay->rings + lay->stride * lay->n_rings ||
	    lay->ctrl >= lay->rings || (lay->test && lay->test >= lay->rings)) {
		dev_err(&pdev->dev, "bad BAR2 layout: ctrl %#llx, rings %#llx + %u * %#llx, heap %#llx + %#llx, test %#llx in %#llx\n",
			lay->ctrl, lay->rings, lay->n_rings, lay->stride,
			lay->heap, lay->heap_size, lay->test, bar);
		return -ENODEV;
	}
	return 0;
}

static void free_irqs(struct pci_dev *pdev, struct mxaccel_pci *mp)
{
	while (mp->n_irqs) {
		unsigned int v = --mp->n_irqs;

		free_irq(mp->irqs[v], v ? (void *)&mp->pe->rings[v - 1] :
					  (void *)mp->pe);
	}
}

static int request_irqs(struct pci_dev *pdev, struct mxaccel_pci *mp)
{
	struct mxaccel_pci_engine *pe = mp->pe;
	int nvec, ret;
	unsigned int v;

	nvec = pci_alloc_irq_vectors(pdev, 1, 1 + pe->base.n_rings,
				     PCI_IRQ_MSIX);
	if (nvec < 0) {
		dev_err(&pdev->dev, "no MSI-X vectors: %d\n", nvec);
		return nvec;
	}
	pe->n_vectors = nvec;
	for (v = 0; v < nvec; v++) {
		int irq = pci_irq_vector(pdev, v);

		if (irq < 0) {
			ret = irq;
			goto err;
		}
		/* Threaded: completing a job takes locks not taken in IRQs. */
		if (v)
			ret = request_threaded_irq(irq, NULL,
						   mxaccel_pci_ring_irq,
						   IRQF_ONESHOT, "mxaccel-ring",
						   &pe->rings[v - 1]);
		else
			ret = request_threaded_irq(irq, NULL,
						   mxaccel_pci_ctrl_irq,
						   IRQF_ONESHOT, "mxaccel-ctrl",
						   pe);
		if (ret)
			goto err;
		mp->irqs[v] = irq;
		mp->n_irqs = v + 1;
	}
	return 0;

err:
	dev_err(&pdev->dev, "vector %u: %d\n", v, ret);
	free_irqs(pdev, mp);
	pci_free_irq_vectors(pdev);
	return ret;
}

static int mxaccel_pci_probe(struct pci_dev *pdev,
			     const struct pci_device_id *id)
{
	struct mxaccel_pci_layout lay;
	resource_size_t start, len;
	struct mxaccel_pci *mp;
	void __iomem *regs, *mem;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	if (!(pci_resource_flags(pdev, MXHW_BAR_MEM) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, MXHW_BAR_MEM) < MXHW_MIN_BAR_SIZE ||
	    pci_resource_len(pdev, MXHW_BAR_REGS) < MXHW_REG_DOORBELL + 4)
		return -ENODEV;
	start = pci_resource_start(pdev, MXHW_BAR_MEM);
	len = pci_resource_len(pdev, MXHW_BAR_MEM);

	regs = pcim_iomap(pdev, MXHW_BAR_REGS, 0);
	if (!regs)
		return -ENOMEM;
	if (!devm_request_mem_region(&pdev->dev, start, len, "mxaccel"))
		return -EBUSY;
	/* Operands are written by the CPU in bulk and read by the device. */
	mem = devm_ioremap_wc(&pdev->dev, start, len);
	if (!mem)
		return -ENOMEM;
	if (readl(mem) != MXHW_MAGIC) {
		dev_dbg(&pdev->dev, "ivshmem without an MX device header\n");
		return -ENODEV;
	}
	ret = read_header(pdev, mem, len, &lay);
	if (ret)
		return ret;

	mp = devm_kzalloc(&pdev->dev, sizeof(*mp), GFP_KERNEL);
	if (!mp)
		return -ENOMEM;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	mp->mdev = mxaccel_device_alloc(&pdev->dev);
	if (IS_ERR(mp->mdev))
		return PTR_ERR(mp->mdev);
	mp->pe = mxaccel_pci_engine_create(mp->mdev, pdev, regs, mem, &lay);
	if (IS_ERR(mp->pe))
		return PTR_ERR(mp->pe);
	/* Until registered, the device owns the engine only through us. */
	mp->mdev->engine = &mp->pe->base;

	/* MSI-X writes are bus-master writes: no interrupts without. */
	pci_set_master(pdev);
	ret = request_irqs(pdev, mp);
	if (ret)
		return ret;
	ret = mxaccel_pci_engine_hello(mp->pe);
	if (ret)
		goto err_irqs;
	ret = mxaccel_device_register(mp->mdev, &mp->pe->base);
	if (ret)
		goto err_shutdown;
	pci_set_drvdata(pdev, mp);
	drm_info(&mp->mdev->drm, "%s: %u rings of %u, %llu MiB device memory, %u vectors, on %s\n",
		 mp->pe->name, mp->pe->base.n_rings, mp->pe->depth,
		 mxaccel_vram_size(mp->mdev->vram) >> 20, mp->pe->n_vectors,
		 pci_name(pdev));
	return 0;

err_shutdown:
	mxaccel_pci_engine_shutdown(mp->pe);
err_irqs:
	free_irqs(pdev, mp);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	return ret;
}

static void mxaccel_pci_remove(struct pci_dev *pdev)
{
	struct mxaccel_pci *mp = pci_get_drvdata(pdev);

	/* No new ioctl, none running; then no user mapping of the BAR. */
	mxaccel_device_unplug(mp->mdev);
	mxaccel_vram_unmap_all(&mp->mdev->drm);
	free_irqs(pdev, mp);
	mxaccel_pci_engine_shutdown(mp->pe);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	/*
	 * devres unmaps the BARs and drops the DRM device's first reference;
	 * rings, queues and the engine go when its last file closes.
	 */
}

static const struct pci_device_id mxaccel_pci_ids[] = {
	{ PCI_DEVICE(MXHW_PCI_VENDOR_ID, MXHW_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, mxaccel_pci_ids);

static struct pci_driver mxaccel_pci_driver = {
	.name = "mxaccel",
	.id_table = mxaccel_pci_ids,
	.probe = mxaccel_pci_probe,
	.remove = mxaccel_pci_remove,
};

int mxaccel_pci_register(void)
{
	return pci_register_driver(&mxaccel_pci_driver);
}

void mxaccel_pci_unregister(void)
{
	pci_unregister_driver(&mxaccel_pci_driver);
}
