package dev.baton.bench;

/**
 * One thing measured: a Baton strategy on a server, a raw primitive written minimally here, or a
 * competing library. A subject opens independent clients; each client is what one process would have
 * (its own connections), and any number of its threads may use it at once.
 */
interface Subject {
    enum Kind { BATON, RAW, COMPETITOR }

    /** Short stable id used on the command line, in tables and in the JSON. */
    String id();

    Kind kind();

    /** The server it runs against: postgresql, mariadb, sqlite, redis, zookeeper. */
    String server();

    /** Library and version (from the jar when it has one), or "this benchmark" for raw primitives. */
    String library();

    /** How a waiter learns that the lock is free: poll interval or notification. */
    String waits();

    /** Opens one independent client; {@code name} tags its connections where the server can show it. */
    default Client open(String name) throws Exception {
        return open(name, null);
    }

    /**
     * Opens one independent client with the given lease time (null: the library's default). Subjects without
     * renewal ignore it.
     */
    Client open(String name, java.time.Duration leaseTime) throws Exception;

    /** The raw primitive this subject is built on (a subject id), or null: the W1 ratio's denominator. */
    default String baseline() {
        return null;
    }

    /** Whether W3 (one client holding up to 10,000 locks) runs for this subject. */
    default boolean manyLocks() {
        return false;
    }

    interface Client extends AutoCloseable {
        /** Blocks until the calling thread holds {@code lock}. */
        Held acquire(String lock) throws Exception;

        /** Statements this client sent through its counted pool (JDBC subjects), or -1. */
        default long statements() {
            return -1;
        }

        /** Of those, statements sent by Baton's renewal thread, or -1. */
        default long renewalStatements() {
            return -1;
        }

        @Override
        void close() throws Exception;
    }

    interface Held {
        /** Releases the hold; called by the thread that acquired it. */
        void release() throws Exception;

        /** Whether the library still reports the hold as valid (true where it cannot tell). */
        default boolean valid() {
            return true;
        }
    }

    /** The version of a Maven artifact on the class path (from its pom.properties, kept by the shade), or "?". */
    static String versionOf(String groupId, String artifactId) {
        String resource = "/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (var in = Subject.class.getResourceAsStream(resource)) {
            var props = new java.util.Properties();
            if (in != null) {
                props.load(in);
                return props.getProperty("version", "?");
            }
            try (var fallback = Subject.class.getResourceAsStream("/bench-versions.properties")) {
                if (fallback != null) {
                    props.load(fallback);
                }
            }
            return props.getProperty(groupId + ":" + artifactId, "?");
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}
