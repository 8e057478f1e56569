package io.efscsi.proxy.config;

/** A config value the proxy cannot use; names the key, the value and what is accepted. */
public final class ConfigException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  public ConfigException(String key, String value, String expected) {
    super("invalid value '" + value + "' for '" + key + "': expected " + expected);
  }
}
