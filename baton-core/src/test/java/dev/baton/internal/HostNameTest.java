package dev.baton.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class HostNameTest {

    @Test
    void theFilesFirstLineTrimmed(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("hostname"), " build-7.example \n");
        assertEquals("build-7.example", HostName.get(file));
    }

    @Test
    void theJdksNameWhenTheFileIsMissingOrEmpty(@TempDir Path dir) throws Exception {
        String jdk = jdkName();
        assertEquals(jdk, HostName.get(dir.resolve("missing")));
        assertEquals(jdk, HostName.get(Files.writeString(dir.resolve("empty"), "\n")));
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void onLinuxTheSameNameTheJdkGives() throws Exception {
        String jdk = jdkName();
        assumeTrue(!jdk.equals("unknown-host") && !jdk.equals("localhost"),
                "this machine's name does not resolve, so the JDK gives none to compare with");
        assertEquals(jdk, HostName.get());
    }

    private static String jdkName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "unknown-host";
        }
    }
}
