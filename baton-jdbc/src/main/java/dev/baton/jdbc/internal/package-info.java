/**
 * Plumbing shared by the JDBC strategies: borrowing connections in auto-commit mode, classifying driver errors,
 * the guarded connection handed to user work ({@link dev.baton.jdbc.internal.ConnectionSupport}), the per-call
 * strategies' extra tables ({@link dev.baton.jdbc.internal.StrategyTable}), the shipped DDL, and what the
 * plumbing does per dialect ({@link dev.baton.jdbc.internal.DialectTraits}), and what more than one strategy
 * package shares: the server-side lock keys ({@link dev.baton.jdbc.internal.SessionKeys}) and the PostgreSQL
 * release notice ({@link dev.baton.jdbc.internal.ReleaseNotice}). The strategy packages depend on this one and
 * on the API package, never in a cycle among themselves (PackageCyclesTest). Not API.
 */
package dev.baton.jdbc.internal;
