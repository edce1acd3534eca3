/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PCI driver for MX devices (mxaccel_pci_drv.c).
 */
#ifndef MXACCEL_PCI_DRV_H
#define MXACCEL_PCI_DRV_H

int mxaccel_pci_register(void);
void mxaccel_pci_unregister(void);

#endif /* MXACCEL_PCI_DRV_H */
