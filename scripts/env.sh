# Sourced by the scripts: picks the Java 25 JDK the build needs (JAVA_HOME if it is 25+,
# else the Temurin 25 these machines ship under /usr/lib/jvm).
java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }
if [ -z "${JAVA_HOME:-}" ] || [ "$(java_major "$JAVA_HOME" | cut -d. -f1)" -lt 25 ] 2>/dev/null; then
  for d in /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25*; do
    if [ -x "$d/bin/javac" ]; then export JAVA_HOME="$d"; break; fi
  done
fi
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "$JAVA_HOME/bin/javac" ]; then
  echo "needs a Java 25 JDK: set JAVA_HOME" >&2
  exit 3
fi
export PATH="$JAVA_HOME/bin:$PATH"
