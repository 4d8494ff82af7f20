package dev.baton.cli;

/**
 * Lock names and holder ids as a terminal can show them without deceiving the reader: every character
 * that is invisible, moves the text (bidirectional controls such as U+202E), breaks the line or the
 * columns is written as an escape, and so is a space at either end.
 *
 * <p>Escapes: {@code \\} for a backslash (so an escape can never be confused with a name that contains one),
 * {@code \u202E} for other characters of the Basic Multilingual Plane, {@code \U000E0041} beyond it.
 * Escaped are: control characters, format characters (Unicode category Cf: bidirectional controls, zero
 * width spaces and joiners, the byte order mark, tag characters), line and paragraph separators, every
 * space other than U+0020, private-use and unassigned code points.
 */
final class Names {
    private Names() {
    }

    /** The text with the characters above escaped; plain text comes back unchanged. */
    static String escape(String text) {
        StringBuilder b = new StringBuilder(text.length());
        int[] cps = text.codePoints().toArray();
        for (int i = 0; i < cps.length; i++) {
            int cp = cps[i];
            boolean edgeSpace = cp == ' ' && (i == 0 || i == cps.length - 1);
            if (cp == '\\') {
                b.append("\\\\");
            } else if (edgeSpace || hidden(cp)) {
                b.append(cp <= 0xFFFF ? String.format("\\u%04X", cp) : String.format("\\U%08X", cp));
            } else {
                b.appendCodePoint(cp);
            }
        }
        return b.toString();
    }

    private static boolean hidden(int cp) {
        if (cp == ' ') {
            return false;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                 Character.SPACE_SEPARATOR, Character.PRIVATE_USE, Character.SURROGATE, Character.UNASSIGNED -> true;
            default -> Character.isWhitespace(cp);
        };
    }
}
