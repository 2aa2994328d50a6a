# Sourced by the sid chroot's scripts: its mounts (undone on exit) and a
# clean environment to run commands in.

sid_mounts=()
unmount_sid_chroot() {
  for ((i = ${#sid_mounts[@]} - 1; i >= 0; i--)); do umount -l "${sid_mounts[i]}" 2>/dev/null || true; done
}

# /proc, /sys and /dev from here (libtorch reads /proc/cpuinfo to pick its kernels), DNS and the CA bundle.
mount_sid_chroot() {
  local root=$1
  trap unmount_sid_chroot EXIT
  for fs in proc sys dev dev/pts; do
    if ! mountpoint -q "$root/$fs"; then
      mount --bind "/$fs" "$root/$fs"
      sid_mounts+=("$root/$fs")
    fi
  done
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # npm there trusts what npm trusts here (a proxy's CA included). A minbase chroot has no /etc/ssl
  # until ca-certificates is installed there.
  mkdir -p "$root/etc/ssl"
  cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$root/etc/ssl/host-ca.crt"
}

# Runs $2 in the chroot at $1 with a clean environment (CI and ONEDNN_MAX_CPU_ISA pass when set).
in_sid_root() {
  local passed=()
  for name in CI ONEDNN_MAX_CPU_ISA; do
    [ -z "${!name:-}" ] || passed+=("$name=${!name}")
  done
  chroot "$1" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive NODE_EXTRA_CA_CERTS=/etc/ssl/host-ca.crt "${passed[@]}" bash -c "$2"
}
