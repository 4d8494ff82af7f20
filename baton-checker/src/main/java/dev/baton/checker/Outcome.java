package dev.baton.checker;

/**
 * How an operation a worker logged ended, as the event log's {@code type} says (the Jepsen convention:
 * {@code ok}, {@code fail}, {@code info}; {@code invoke} starts an operation and is no outcome).
 */
enum Outcome {
    /** No outcome was logged: the worker process ended first. */
    NONE(null),
    /** It took effect ({@code ok}). */
    OK("ok"),
    /** It definitely did not take effect ({@code fail}): a timeout, a refusal. */
    FAIL("fail"),
    /** It ended in an error and may or may not have taken effect ({@code info}). */
    INDETERMINATE("info");

    private final String eventType;

    Outcome(String eventType) {
        this.eventType = eventType;
    }

    /** The event log's {@code type} of this outcome. */
    String eventType() {
        return eventType;
    }

    /**
     * The outcome an event's {@code type} reports.
     *
     * @throws IllegalArgumentException if the type is no outcome ({@code invoke}, or anything unknown)
     */
    static Outcome ofEventType(String type) {
        for (Outcome o : values()) {
            if (o.eventType != null && o.eventType.equals(type)) {
                return o;
            }
        }
        throw new IllegalArgumentException("not an outcome: " + type);
    }
}
