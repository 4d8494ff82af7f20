/**
 * Micrometer meters and observations for Baton clients: {@code BatonMetrics} in {@code dev.baton.micrometer}, the one
 * exported package.
 */
module dev.baton.micrometer {
    requires transitive dev.baton.core;
    requires transitive micrometer.core;
    requires transitive micrometer.observation;

    exports dev.baton.micrometer;
}
