/**
 * The session strategy: advisory locks / {@code GET_LOCK} held by two dedicated server sessions
 * ({@link dev.baton.jdbc.session.SessionLockBackend}, the algorithm, which opens with its steps and names the
 * package-private classes that carry them), its SQL per dialect ({@link dev.baton.jdbc.session.SessionStatements}).
 * Not API.
 */
package dev.baton.jdbc.session;
