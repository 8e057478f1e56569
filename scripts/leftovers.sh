# Sourced by scripts/test: lists, one line each, what the suites could leave on this machine (their
# temporary trees, proxy cgroups, loopback and stand-in NFS mounts, and the processes they start:
# proxies, plugins, NFS servers, TLS peers, VMs). scripts/test compares the list after the run
# with the one before it and fails on anything new.
leftovers() {
  find /tmp -maxdepth 1 \( -name 'efscsi*' -o -name 'efs-csi*' \) ! -name '*.lock' \
    -printf 'temp: %p\n' 2>/dev/null
  find /sys/fs/cgroup -maxdepth 3 -type d -name '*efs-csi*' -printf 'cgroup: %p\n' 2>/dev/null
  awk '/ - nfs4? 127\.0\.0\.1:/ || / - tmpfs efs-test / { print "mount: " $5 }' /proc/self/mountinfo
  pgrep -af 'io\.efscsi\.(proxy\.ProxyMain|launcher\.Main)|ganesha\.nfsd|stunnel|qemu-system|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet --config|containerd --config /tmp/efs-csi|etcd --name=efs-csi' | sed 's/^/process: /'
  # the node DaemonSet's efs-utils hostPaths (the cluster suite installs the chart)
  ls -d /var/run/efs /var/amazon/efs /etc/amazon/efs 2>/dev/null | sed 's/^/hostpath: /'
  # the test cluster's API server address on lo and its pod network's bridge
  ip -o addr show dev lo 2>/dev/null | awk '$4 ~ /^198\.18\./ { print "address: " $4 }'
  ip -o link show type bridge 2>/dev/null | awk -F': ' '$2 ~ /^efscsi/ { print "bridge: " $2 }'
  true
}
