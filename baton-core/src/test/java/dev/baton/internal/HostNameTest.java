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
    void onLinuxTheNameTheKernelGives() throws Exception {
        // uname -n asks the kernel (gethostname), as getLocalHost() starts from, without the name lookup that makes
        // the JDK answer "unknown-host" where the name does not resolve: so this compares on every Linux machine
        Process uname = new ProcessBuilder("uname", "-n").redirectErrorStream(true).start();
        String kernel = new String(uname.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        assertEquals(0, uname.waitFor(), "uname -n: " + kernel);
        assertEquals(kernel, HostName.get());
    }

    private static String jdkName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "unknown-host";
        }
    }
}
