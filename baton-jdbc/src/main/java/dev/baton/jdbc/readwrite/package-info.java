/**
 * The lease strategy's read-write locks in {@code <table>_rw} ({@link dev.baton.jdbc.readwrite.ReadWriteTable},
 * the algorithm; {@link dev.baton.jdbc.readwrite.ReadWriteStatements} per dialect). Not API.
 */
package dev.baton.jdbc.readwrite;
