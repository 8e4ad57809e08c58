#!/bin/bash
# /init of ferry's test guest (testing/vm/make_rootfs.sh puts it in the
# image): PID 1 on a kernel booted with root=/dev/nvme0n1 rw init=/init and no
# initrd. It proves the root file system works end to end, reads and writes,
# on the serial console (console=ttyS0), then powers the machine off:
#   FERRY-VM-PYTHON <version> <sum>  python3 ran (its interpreter, libraries
#                                    and stdlib files all read from the disk)
#   FERRY-VM-BOOTED                  the marker a test waits for
#   FERRY-VM-WROTE <kernel release>  /ferry-guest-wrote holds that same line,
#                                    synced, and the root is read-only again
#                                    (its journal checkpointed: a copy of the
#                                    disk reads clean with debugfs and e2fsck)
# A failed step prints FERRY-VM-FAILED and the machine still powers off, so
# qemu (with -no-reboot and panic=-1) always ends.
export PATH=/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

off() {
  sync
  echo o >/proc/sysrq-trigger
  # The power-off runs from a kernel work queue: wait for it here, since PID 1
  # returning would panic (and panic=-1 reboots, which -no-reboot ends).
  read -r -t 60 _ || true
  exit 1
}
failed() { echo "FERRY-VM-FAILED: $*"; off; }

python3 -B -c 'import sys; print("FERRY-VM-PYTHON", sys.version.split()[0], sum(range(101)))' ||
  failed "python3"
echo "FERRY-VM-BOOTED"
line="FERRY-VM-WROTE $(</proc/sys/kernel/osrelease)"
echo "$line" >/ferry-guest-wrote || failed "write /ferry-guest-wrote"
sync || failed "sync"
mount -o remount,ro / || failed "remount read-only"
echo "$line"
off
