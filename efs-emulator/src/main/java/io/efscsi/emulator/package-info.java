/** An EFS and STS API emulator on loopback for tests, benchmarks and the demo. */
package io.efscsi.emulator;
