package io.efscsi.common.grpc;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.efscsi.csi.v1.Csi;
import java.util.List;
import java.util.Map;

/**
 * Renders CSI messages for logs with every field marked {@code [(csi_secret) = true]} in csi.proto
 * replaced by {@value #STRIPPED}. Map keys stay visible (they name the secret, not its value);
 * values never appear. Works on any message, at any depth, driven by the field options.
 */
public final class SecretRedactor {

  public static final String STRIPPED = "***stripped***";

  private static final TextFormat.Printer PRINTER = TextFormat.printer().emittingSingleLine(true);

  private SecretRedactor() {}

  /** A one-line text form of {@code message} with secrets stripped. */
  public static String toLogString(Message message) {
    return PRINTER.printToString(redact(message));
  }

  /** A copy of {@code message} with secrets stripped; the message itself if it holds none. */
  public static Message redact(Message message) {
    Message.Builder builder = null;
    for (Map.Entry<FieldDescriptor, Object> e : message.getAllFields().entrySet()) {
      FieldDescriptor field = e.getKey();
      Object value = e.getValue();
      Object replacement = isSecret(field) ? strip(field, value) : redactNested(field, value);
      if (replacement != value) {
        if (builder == null) {
          builder = message.toBuilder();
        }
        builder.setField(field, replacement);
      }
    }
    return builder == null ? message : builder.build();
  }

  private static boolean isSecret(FieldDescriptor field) {
    return field.getOptions().getExtension(Csi.csiSecret);
  }

  private static Object redactNested(FieldDescriptor field, Object value) {
    if (field.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
      return value;
    }
    if (field.isRepeated()) {
      List<?> items = (List<?>) value;
      List<Object> out = new java.util.ArrayList<>(items.size());
      boolean changed = false;
      for (Object item : items) {
        Message redacted = redact((Message) item);
        changed |= redacted != item;
        out.add(redacted);
      }
      return changed ? out : value;
    }
    return redact((Message) value);
  }

  private static Object strip(FieldDescriptor field, Object value) {
    if (field.isMapField()) {
      List<?> entries = (List<?>) value;
      List<Object> out = new java.util.ArrayList<>(entries.size());
      for (Object entry : entries) {
        Message m = (Message) entry;
        FieldDescriptor valueField = m.getDescriptorForType().findFieldByName("value");
        Message.Builder b = m.toBuilder();
        if (valueField.getJavaType() == FieldDescriptor.JavaType.STRING) {
          b.setField(valueField, STRIPPED);
        } else {
          b.clearField(valueField);
        }
        out.add(b.build());
      }
      return out;
    }
    if (field.isRepeated()) {
      return List.of();
    }
    if (field.getJavaType() == FieldDescriptor.JavaType.STRING) {
      return STRIPPED;
    }
    return field.getDefaultValue();
  }
}
