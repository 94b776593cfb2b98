/// The records of one `read` from an inotify descriptor.
public struct InotifyEvents: Sequence, IteratorProtocol {
    public struct Event {
        public var watch: Int32
        public var mask: UInt32
        public var name: String
    }

    let bytes: ArraySlice<UInt8>
    var offset: Int

    public init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.offset = bytes.startIndex
    }

    public mutating func next() -> Event? {
        // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[len]; }
        let header = 16
        guard offset + header <= bytes.endIndex else { return nil }
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        let watch = Int32(bitPattern: u32(offset))
        let mask = u32(offset + 4)
        let length = Int(u32(offset + 12))
        let nameStart = offset + header
        let end = Swift.min(nameStart + length, bytes.endIndex)
        let nameBytes = bytes[nameStart..<end].prefix { $0 != 0 }
        offset = nameStart + length
        return Event(watch: watch, mask: mask, name: String(decoding: nameBytes, as: UTF8.self))
    }
}
