/// Text from outside (a reason from a third-party monitor, an interface name, a
/// line of the event log) printed on a terminal. A control character there is an
/// instruction, not text: ESC starts a sequence that can retitle the window,
/// write to the clipboard, move the cursor or clear the screen, and a newline
/// breaks a one-line status. So each one is shown the way `cat -v` shows it:
/// ESC as `^[`, a newline as `^J`, DEL as `^?`, the 8-bit controls as `M-^[`.
public enum TerminalText {
    /// `text` with every control character made visible; everything else as is.
    public static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x20 {
                out += "^"
                out.unicodeScalars.append(Unicode.Scalar(UInt8(v + 0x40)))
            } else if v == 0x7F {
                out += "^?"
            } else if (0x80...0x9F).contains(v) {
                out += "M-^"
                out.unicodeScalars.append(Unicode.Scalar(UInt8(v - 0x80 + 0x40)))
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// C0 controls, DEL and the C1 controls (U+0080–U+009F: some terminals take
    /// U+009B as the one-character form of ESC [).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
