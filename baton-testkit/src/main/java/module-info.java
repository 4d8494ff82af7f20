/**
 * The contract ladder every backend climbs ({@code dev.baton.testkit}: the rungs, {@code LockFixture},
 * {@code ClientConfig}, {@code HolderProcess}, {@code TestServers}). A test library: it needs JUnit 5 and AssertJ.
 */
module dev.baton.testkit {
    requires transitive dev.baton.core;
    requires transitive dev.baton.faultproxy;
    requires transitive org.junit.jupiter.api;
    requires org.assertj.core;
    requires awaitility;

    exports dev.baton.testkit;
    // JUnit instantiates the rungs reflectively
    opens dev.baton.testkit to org.junit.platform.commons;
}
