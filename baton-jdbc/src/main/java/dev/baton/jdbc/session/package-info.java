/**
 * The session strategy: advisory locks / {@code GET_LOCK} held by two dedicated server sessions
 * ({@link dev.baton.jdbc.session.SessionLockBackend}, the algorithm), its SQL per dialect
 * ({@link dev.baton.jdbc.session.SessionStatements}). Not API.
 */
package dev.baton.jdbc.session;
