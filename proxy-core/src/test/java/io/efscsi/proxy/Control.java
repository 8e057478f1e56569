package io.efscsi.proxy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** A control socket client, as the supervisor's: one command line, one answer line. */
final class Control {

  private Control() {}

  static String ask(Path socket, String command) throws Exception {
    try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      ch.write(ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.UTF_8)));
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
      return in.readLine();
    }
  }
}
