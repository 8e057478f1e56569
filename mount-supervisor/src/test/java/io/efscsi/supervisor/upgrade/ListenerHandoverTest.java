package io.efscsi.supervisor.upgrade;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real syscalls on this process's own sockets (pidfd_getfd needs no privilege on oneself): the
 * copy is the same listening socket, and it keeps listening after its owner closed its descriptor,
 * as a retired proxy's port does after it exits.
 */
class ListenerHandoverTest {

  @Test
  void theCopyKeepsTheSocketListeningAfterItsOwnerClosesIt() throws Exception {
    ServerSocketChannel owner = ServerSocketChannel.open();
    owner.bind(new InetSocketAddress("127.0.0.1", 0), 8);
    int port = ((InetSocketAddress) owner.getLocalAddress()).getPort();
    long self = ProcessHandle.current().pid();
    try (ListenerHandover.Taken copy = ListenerHandover.take(self, port, () -> true)) {
      assertTrue(ListenerHandover.listening(copy.fd()));
      assertEquals(port, ListenerHandover.localPort(copy.fd()));
      owner.close();
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        assertTrue(s.isConnected(), "the copy's backlog took the connection");
      }
    }
  }

  @Test
  void aPidNamingAnotherProcessIsLeftAlone() throws Exception {
    try (ServerSocketChannel owner = ServerSocketChannel.open()) {
      owner.bind(new InetSocketAddress("127.0.0.1", 0), 8);
      int port = ((InetSocketAddress) owner.getLocalAddress()).getPort();
      ListenerHandover.NotTaken e =
          assertThrows(
              ListenerHandover.NotTaken.class,
              () -> ListenerHandover.take(ProcessHandle.current().pid(), port, () -> false));
      assertEquals("gone", e.reason());
    }
  }

  @Test
  void aPortNothingListensOnIsRefusedNamingIt() throws Exception {
    int port;
    try (ServerSocketChannel probe = ServerSocketChannel.open()) {
      probe.bind(new InetSocketAddress("127.0.0.1", 0));
      port = ((InetSocketAddress) probe.getLocalAddress()).getPort();
    }
    ListenerHandover.NotTaken e =
        assertThrows(
            ListenerHandover.NotTaken.class,
            () -> ListenerHandover.take(ProcessHandle.current().pid(), port, () -> true));
    assertEquals("not-listening", e.reason());
    assertEquals("nothing listens on 127.0.0.1:" + port, e.getMessage());
  }

  @Test
  void aListenerOfAnotherProcessIsNotFoundAmongThisOnesDescriptors() throws Exception {
    try (ServerSocketChannel owner = ServerSocketChannel.open()) {
      owner.bind(new InetSocketAddress("127.0.0.1", 0), 8);
      int port = ((InetSocketAddress) owner.getLocalAddress()).getPort();
      long parent = ProcessHandle.current().parent().orElseThrow().pid();
      ListenerHandover.NotTaken e =
          assertThrows(
              ListenerHandover.NotTaken.class,
              () -> ListenerHandover.take(parent, port, () -> true));
      assertEquals("not-listening", e.reason(), e.getMessage());
    }
  }

  @Test
  void theTableIsReadForTheLoopbackListenerOnly(@TempDir Path dir) throws Exception {
    Path table = dir.resolve("tcp");
    Files.writeString(
        table,
        """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:4E51 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0
           1: 00000000:4E52 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0
           2: 0100007F:4E52 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0
        """);
    assertEquals(Optional.of(1111L), ListenerHandover.listeningInode(table, 20049));
    assertEquals(Optional.empty(), ListenerHandover.listeningInode(table, 20050));
    assertFalse(ListenerHandover.listeningInode(table, 1).isPresent());
  }
}
