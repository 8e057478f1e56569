package io.efscsi.common.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class StatusMapperTest {

  @ParameterizedTest
  @EnumSource(DriverException.Kind.class)
  void everyDomainKindMapsToItsCodeWithTheMessage(DriverException.Kind kind) {
    Status s = StatusMapper.toStatus(new DriverException(kind, "volume fs-1 is odd"));
    assertEquals(kind.name(), s.getCode().name());
    assertEquals("volume fs-1 is odd", s.getDescription());
  }

  @Test
  void jdkExceptionsMapToMeaningfulCodes() {
    assertEquals(
        Status.Code.INVALID_ARGUMENT,
        StatusMapper.toStatus(new IllegalArgumentException("bad uid -1")).getCode());
    assertEquals(
        Status.Code.DEADLINE_EXCEEDED,
        StatusMapper.toStatus(new TimeoutException("mount took 30s")).getCode());
    assertEquals(Status.Code.ABORTED, StatusMapper.toStatus(new InterruptedException()).getCode());
    assertEquals(
        Status.Code.UNIMPLEMENTED,
        StatusMapper.toStatus(new UnsupportedOperationException()).getCode());
    Status io = StatusMapper.toStatus(new NoSuchFileException("/var/run/efs-csi/x.json"));
    assertEquals(Status.Code.INTERNAL, io.getCode());
    assertTrue(io.getDescription().contains("/var/run/efs-csi/x.json"), io.getDescription());
  }

  @Test
  void wrappersAreUnwrapped() {
    DriverException inner = DriverException.notFound("access point fsap-1 not found");
    assertEquals(
        Status.Code.NOT_FOUND, StatusMapper.toStatus(new CompletionException(inner)).getCode());
    assertEquals(
        Status.Code.NOT_FOUND, StatusMapper.toStatus(new ExecutionException(inner)).getCode());
    assertEquals(
        Status.Code.INTERNAL,
        StatusMapper.toStatus(new UncheckedIOException(new IOException("disk"))).getCode());
  }

  @Test
  void statusExceptionsPassThroughButUnknownNeverDoes() {
    assertEquals(
        Status.Code.ALREADY_EXISTS,
        StatusMapper.toStatus(Status.ALREADY_EXISTS.withDescription("x").asRuntimeException())
            .getCode());
    Status s = StatusMapper.toStatus(Status.UNKNOWN.withDescription("?").asRuntimeException());
    assertNotEquals(Status.Code.UNKNOWN, s.getCode());
    Status withCause =
        StatusMapper.toStatus(
            Status.UNKNOWN.withCause(DriverException.aborted("busy")).asRuntimeException());
    assertEquals(Status.Code.ABORTED, withCause.getCode());
  }

  @Test
  void anythingElseIsInternalNamingTheException() {
    Status s = StatusMapper.toStatus(new NullPointerException("x was null"));
    assertEquals(Status.Code.INTERNAL, s.getCode());
    assertTrue(s.getDescription().contains("NullPointerException: x was null"));
    assertEquals(Status.Code.INTERNAL, StatusMapper.toStatus(new StackOverflowError()).getCode());
  }
}
