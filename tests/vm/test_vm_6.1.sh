#!/bin/bash
# SPDX-License-Identifier: MIT
# kselftests and end-to-end tests inside a VM booting Debian's 6.1 kernel.
exec "$(dirname "$0")/check.sh" 6.1
