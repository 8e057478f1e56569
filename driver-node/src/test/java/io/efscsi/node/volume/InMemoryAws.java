package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** In-memory DNS and EFS/EC2 for resolver and planner tests; records what was asked. */
final class InMemoryAws implements HostResolver, MountTargetLookup {

  final Map<String, List<InetAddress>> dns = new HashMap<>();
  final Map<String, List<MountTargetDescription>> mountTargets = new HashMap<>();
  final Map<String, String> zoneIds = new HashMap<>();
  final List<String> calls = new ArrayList<>();
  DriverException failure;

  InMemoryAws resolves(String host, String ip) {
    dns.put(host, List.of(InetAddress.ofLiteral(ip)));
    return this;
  }

  InMemoryAws mountTarget(
      String fs, String id, String zone, String zoneId, String state, String ip) {
    mountTargets
        .computeIfAbsent(fs, k -> new ArrayList<>())
        .add(
            new MountTargetDescription(
                id, zone, zoneId, state, Optional.ofNullable(ip), Optional.empty()));
    return this;
  }

  @Override
  public List<InetAddress> resolve(String host) {
    calls.add("dns " + host);
    return dns.getOrDefault(host, List.of());
  }

  @Override
  public List<MountTargetDescription> mountTargets(String region, String fileSystemId) {
    calls.add("DescribeMountTargets " + region + " " + fileSystemId);
    if (failure != null) {
      throw failure;
    }
    return mountTargets.getOrDefault(fileSystemId, List.of());
  }

  @Override
  public Optional<String> availabilityZoneId(String region, String availabilityZoneName) {
    calls.add("DescribeAvailabilityZones " + region + " " + availabilityZoneName);
    if (failure != null) {
      throw failure;
    }
    return Optional.ofNullable(zoneIds.get(availabilityZoneName));
  }
}
