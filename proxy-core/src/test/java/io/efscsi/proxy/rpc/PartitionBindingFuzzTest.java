package io.efscsi.proxy.rpc;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Any bytes a mount target sends in answer to BindClientToPartition are a reply or an {@link
 * OncRpc.RpcException} (the proxy then closes that upstream connection); never another failure.
 */
class PartitionBindingFuzzTest {

  @FuzzTest(maxDuration = "20s")
  void anyBindReplyParsesOrIsAnRpcError(FuzzedDataProvider data) {
    BindProtocol p = data.pickValue(BindProtocol.values());
    int xid = data.consumeInt();
    ByteBuf body = Unpooled.wrappedBuffer(data.consumeRemainingAsBytes());
    try {
      PartitionBinding.parse(body, xid, p);
    } catch (OncRpc.RpcException e) {
      if (e.getMessage() == null || e.getMessage().isBlank()) {
        throw new AssertionError("an RPC error without a message", e);
      }
    } finally {
      body.release();
    }
  }
}
