#!/bin/bash
# SPDX-License-Identifier: MIT
# The MX PCI device model in a VM booting Debian's 6.12 kernel, driven by
# hand from the guest (devmodel-smoke.sh; about 10 s).
exec "$(dirname "$0")/devmodel-smoke.sh" 6.12
