import Glibc

/// Marks every file-backed mapping of this process (its own executable and the
/// shared libraries loaded so far) as randomly accessed, `madvise(MADV_RANDOM)`.
///
/// A page fault on a file mapping normally reads the pages around it from disk
/// as well (read-around, up to hundreds of kB), and the kernel then maps every
/// neighbouring page that is in the cache (fault-around). A daemon that idles
/// all day runs a few scattered functions of its 40 MB executable, so at a
/// start from a cold cache (the first start after boot: nothing else maps
/// `lifeline-daemon`) most of what it read around stayed resident for nothing.
/// Random access reads only the page that faulted. Pages that are already in
/// the cache are still mapped around; that part the kernel does not let a
/// process choose.
enum RandomAccessMappings {
    /// Applies the advice; returns how many mappings took it and the first error
    /// met (nil if none). Never fails the daemon: the advice only saves memory.
    @discardableResult
    static func apply() -> (advised: Int, error: String?) {
        guard let maps = readMaps() else { return (0, "cannot read /proc/self/maps: errno \(errno)") }
        var advised = 0
        var firstError: String?
        for line in maps.split(separator: "\n") {
            guard let mapping = Mapping(line) else { continue }
            let length = Int(mapping.end - mapping.start)
            if madvise(UnsafeMutableRawPointer(bitPattern: UInt(mapping.start)), length, MADV_RANDOM) == 0 {
                advised += 1
            } else if firstError == nil {
                firstError = "madvise(MADV_RANDOM) on \(mapping.path): errno \(errno)"
            }
        }
        return (advised, firstError)
    }

    /// One line of /proc/self/maps that names a file:
    /// `start-end perms offset dev inode path`.
    struct Mapping {
        var start: UInt64
        var end: UInt64
        var path: Substring

        init?(_ line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[4] != "0" else { return nil }  // inode 0: anonymous, [heap], [stack]…
            let path = fields[5].drop { $0 == " " }
            guard path.first == "/" else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
                  start < end else { return nil }
            self.start = start
            self.end = end
            self.path = path
        }
    }

    /// The whole of /proc/self/maps (a few hundred lines), read with plain
    /// system calls: this runs before anything else in the daemon.
    static func readMaps() -> String? {
        let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < 4 << 20 {  // bounded: a process never has 4 MB of mappings to list
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
