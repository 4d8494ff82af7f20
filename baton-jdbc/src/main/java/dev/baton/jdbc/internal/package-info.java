/**
 * Plumbing shared by the JDBC strategies: borrowing connections in auto-commit mode, classifying driver errors,
 * the guarded connection handed to user work ({@link dev.baton.jdbc.internal.ConnectionSupport}), the per-call
 * strategies' extra tables ({@link dev.baton.jdbc.internal.StrategyTable}), the shipped DDL, and what the
 * plumbing does per dialect ({@link dev.baton.jdbc.internal.DialectTraits}). Not API.
 */
package dev.baton.jdbc.internal;
