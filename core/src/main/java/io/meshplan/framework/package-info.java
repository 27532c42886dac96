/**
 * The names training frameworks give their settings, written once for the writers of {@code
 * export} and the log readers of {@code calibrate}: Megatron-LM's arguments ({@link
 * io.meshplan.framework.MegatronArg}) and torchtitan's job TOML keys ({@link
 * io.meshplan.framework.TorchtitanKey}). It depends on nothing but the JDK.
 */
package io.meshplan.framework;
