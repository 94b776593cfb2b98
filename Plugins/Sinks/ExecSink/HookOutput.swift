import Glibc
import LifelineCore

/// What a hook prints, made into a few clean lines for the daemon's log. The
/// memory it takes is fixed whatever the hook prints: a line is kept up to
/// `maxLineBytes` (the rest of it is dropped), at most `maxLines` lines are kept
/// per run, and everything past that is only counted.
struct HookOutput {
    static let maxLineBytes = 512
    static let maxLines = 50

    private var pending: [UInt8] = []
    private var cut = false
    private(set) var lines = 0
    /// Bytes read but not logged: past `maxLines`, or the cut-off end of a long line.
    private(set) var discardedBytes = 0

    /// Lines completed by `bytes`, cleaned, ready to log. Works on whole runs of
    /// bytes between newlines (`memchr`), so a flood costs little time as well.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard var at = bytes.baseAddress else { return [] }
        let end = at + bytes.count
        var out: [String] = []
        while at < end {
            if lines >= Self.maxLines {
                discardedBytes += end - at
                break
            }
            let newline = memchr(at, 0x0A, end - at).map(UnsafeRawPointer.init)
            let pieceEnd = newline ?? end
            let length = pieceEnd - at
            let room = Self.maxLineBytes - pending.count
            let kept = min(length, room)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: at, count: kept))
            if length > room {
                cut = true
                discardedBytes += length - room
            }
            guard let newline else { break }
            if let line = takeLine() { out.append(line) }
            at = newline + 1
        }
        return out
    }

    /// The last line, when the output did not end with a newline.
    mutating func finish() -> String? {
        pending.isEmpty && !cut ? nil : takeLine()
    }

    private mutating func takeLine() -> String? {
        defer {
            pending.removeAll(keepingCapacity: true)
            cut = false
        }
        guard lines < Self.maxLines else { return nil }
        lines += 1
        return Self.clean(pending) + (cut ? "…" : "")
    }

    /// Invalid UTF-8 becomes U+FFFD, and control characters show as `^[`: the log
    /// may end up on a terminal, where ESC would start an escape sequence.
    static func clean(_ bytes: [UInt8]) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        return TerminalText.visible(text)
    }
}
