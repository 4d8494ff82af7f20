package dev.baton.zookeeper;

import dev.baton.spi.LockMode;
import org.apache.zookeeper.common.PathUtils;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Znode names of Baton's locks: a lock's parent {@code <root>/<encoded name>}, its members
 * {@code _c_<uuid>-<mode>-<sequence>} (Curator's protected prefix, then {@code x} exclusive, {@code r} read or
 * {@code w} write, then ZooKeeper's sequence suffix).
 *
 * <p>A lock name is encoded so that any valid name (1–512 code points, no U+0000, no unpaired surrogate) is one
 * znode name ZooKeeper accepts, and decodes back whole: letters, digits, {@code _} and {@code -} stand for
 * themselves; every other UTF-8 byte is {@code %XX} (so {@code /}, {@code .}, {@code %}, control and private-use
 * characters, which ZooKeeper refuses or treats specially, never appear raw).
 */
final class ZooKeeperNames {
    /** The default root of every lock's parent znode. */
    static final String DEFAULT_ROOT = "/baton/locks";

    private ZooKeeperNames() {
    }

    /**
     * Checks a root path: absolute, valid for ZooKeeper, not {@code /} itself and not under {@code /zookeeper}.
     *
     * @throws IllegalArgumentException naming what is wrong with it
     */
    static String validateRoot(String root) {
        if (root == null) {
            throw new IllegalArgumentException("rootPath must not be null");
        }
        if (root.equals("/")) {
            throw new IllegalArgumentException("rootPath must not be '/': Baton needs a znode of its own, such as "
                    + DEFAULT_ROOT);
        }
        if (root.equals("/zookeeper") || root.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("rootPath must not be under /zookeeper, which ZooKeeper reserves: "
                    + root);
        }
        try {
            PathUtils.validatePath(root);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rootPath '" + root + "' is not a valid znode path: " + e.getMessage(), e);
        }
        return root;
    }

    /** The parent znode of a lock under {@code root}: its members are its children. */
    static String parent(String root, String name) {
        return root + "/" + encode(name);
    }

    /** The encoded znode name of a lock. */
    static String encode(String name) {
        StringBuilder sb = new StringBuilder(name.length() + 8);
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                sb.append((char) c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return sb.toString();
    }

    /** The lock name of an encoded znode name, or empty if it is not one Baton wrote. */
    static Optional<String> decode(String node) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(node.length());
        for (int i = 0; i < node.length(); i++) {
            char c = node.charAt(i);
            if (c == '%') {
                if (i + 2 >= node.length()) {
                    return Optional.empty();
                }
                int hi = Character.digit(node.charAt(i + 1), 16);
                int lo = Character.digit(node.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return Optional.empty();
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if (c < 128) {
                out.write(c);
            } else {
                return Optional.empty();
            }
        }
        String name = out.toString(StandardCharsets.UTF_8);
        return name.isEmpty() || !encode(name).equals(node) ? Optional.empty() : Optional.of(name);
    }

    /** The prefix of a member node of this mode, before Curator's protection and ZooKeeper's sequence. */
    static String prefix(LockMode mode) {
        return switch (mode) {
            case EXCLUSIVE -> "x-";
            case READ -> "r-";
            case WRITE -> "w-";
        };
    }

    /**
     * One member of a lock's line, parsed from its znode name.
     *
     * @param node     the znode name (child of the lock's parent)
     * @param mode     the kind of hold it asks for
     * @param sequence its place in the line (ZooKeeper's sequence suffix)
     */
    record Member(String node, LockMode mode, long sequence) {
        /** Whether it is in the read-write line (a read or write member) rather than the exclusive one. */
        boolean readWrite() {
            return mode != LockMode.EXCLUSIVE;
        }
    }

    /** Parses a member node name, or empty if it is not one of Baton's. */
    static Optional<Member> member(String node) {
        String n = node;
        if (n.startsWith("_c_")) {
            // Curator's protected prefix: "_c_" + a 36-character UUID + "-"
            if (n.length() < 40 || n.charAt(39) != '-') {
                return Optional.empty();
            }
            n = n.substring(40);
        }
        if (n.length() < 3 || n.charAt(1) != '-') {
            return Optional.empty();
        }
        LockMode mode = switch (n.charAt(0)) {
            case 'x' -> LockMode.EXCLUSIVE;
            case 'r' -> LockMode.READ;
            case 'w' -> LockMode.WRITE;
            default -> null;
        };
        if (mode == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Member(node, mode, Long.parseLong(n.substring(2))));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
