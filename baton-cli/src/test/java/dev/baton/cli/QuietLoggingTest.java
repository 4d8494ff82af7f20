package dev.baton.cli;

import org.junit.jupiter.api.Test;

import java.util.Properties;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

class QuietLoggingTest {
    private static final String CONFIG_CLASS = "java.util.logging.config.class";
    private static final String CONFIG_FILE = "java.util.logging.config.file";

    /** What the LogManager reads when pgjdbc (or the JDK) first logs in a quiet call: nothing gets out. */
    @Test
    void javaUtilLoggingIsOffWithNoHandler() throws Exception {
        String before = System.getProperty(CONFIG_CLASS);
        System.setProperty(CONFIG_CLASS, QuietLogging.class.getName());
        try {
            LogManager.getLogManager().readConfiguration();
            Logger root = Logger.getLogger("");
            assertThat(root.getLevel()).isEqualTo(Level.OFF);
            assertThat(root.getHandlers()).isEmpty();
            assertThat(Logger.getLogger("org.postgresql.Driver").isLoggable(Level.SEVERE)).isFalse();
        } finally {
            restore(CONFIG_CLASS, before);
            LogManager.getLogManager().readConfiguration();
        }
    }

    @Test
    void aQuietCallNamesItAndAVerboseOneOrAGivenConfigurationDoesNot() {
        Properties saved = (Properties) System.getProperties().clone();
        try {
            System.clearProperty(CONFIG_CLASS);
            System.clearProperty(CONFIG_FILE);
            BatonCommand.configureLogging(false, false);
            assertThat(System.getProperty(CONFIG_CLASS)).isEqualTo(QuietLogging.class.getName());

            System.clearProperty(CONFIG_CLASS);
            BatonCommand.configureLogging(true, false);
            assertThat(System.getProperty(CONFIG_CLASS)).isNull();

            System.setProperty(CONFIG_FILE, "/etc/my-logging.properties");
            BatonCommand.configureLogging(false, false);
            assertThat(System.getProperty(CONFIG_CLASS)).isNull();
        } finally {
            System.setProperties(saved);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
