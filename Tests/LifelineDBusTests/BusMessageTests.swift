import LifelineDBus
import Testing

@Suite struct BusMessageTests {
    static let everyType: [BusValue] = [
        .byte(7), .bool(true), .int16(-3), .uint16(3), .int32(-70000), .uint32(70000),
        .int64(-1 << 40), .uint64(1 << 63), .double(-0.25), .string("wlan0 — ok"), .objectPath("/org/lifeline/Lifeline1"),
        .signature("a{sv}"), .variant(.variant(.string("nested"))),
        .array(element: "s", []), .array(element: "u", [.uint32(1), .uint32(2)]),
        .vardict([("state", .string("online")), ("rtt_ms", .double(12.5)), ("metered", .bool(false)), ("sequence", .uint64(3))]),
        .dictionary(key: "s", value: "v", []),
        .structure([.string("a"), .array(element: "(ib)", [.structure([.int32(1), .bool(false)])])]),
    ]

    @Test func valuesSurviveTheWireFormat() throws {
        let m = try BusMessage.signal(path: "/a/b", interface: "org.example.I", member: "Changed")
        try m.append(Self.everyType)
        #expect(try m.arguments() == Self.everyType)
        #expect(m.signature == Self.everyType.map(\.signature).joined())
    }

    @Test func vardictEntriesUnwrapVariants() throws {
        let m = try BusMessage.signal(path: "/a", interface: "org.example.I", member: "S")
        try m.append(.vardict([("state", .string("offline")), ("sequence", .uint64(9))]))
        let pairs = try #require(try m.arguments().first?.vardictEntries)
        #expect(pairs.map(\.0) == ["state", "sequence"])
        #expect(pairs.map(\.1) == [.string("offline"), .uint64(9)])
    }

    @Test func invalidNamesAndValuesThrowInsteadOfAborting() throws {
        // libdbus aborts the process on these; the wrapper must refuse them first.
        #expect(throws: BusError.self) { try BusMessage.methodCall(destination: nil, path: "no/slash", interface: nil, member: "M") }
        #expect(throws: BusError.self) { try BusMessage.methodCall(destination: "not a name", path: "/", interface: nil, member: "M") }
        #expect(throws: BusError.self) { try BusMessage.signal(path: "/", interface: "noDots", member: "M") }
        #expect(throws: BusError.self) { try BusMessage.signal(path: "/", interface: "a.b", member: "1bad") }
        let m = try BusMessage.signal(path: "/", interface: "a.b", member: "M")
        #expect(throws: BusError.self) { try m.append(.objectPath("//double")) }
        #expect(throws: BusError.self) { try m.append(.signature("a{")) }
        #expect(throws: BusError.self) { try m.append(.array(element: "s", [.uint32(1)])) }
        #expect(throws: BusError.self) { try m.append(.dictionary(key: "v", value: "s", [])) }
        #expect(throws: BusError.self) { try m.append(.array(element: "", [])) }
        // A string with a NUL loses the NUL rather than being cut or refused.
        try m.append(.string("a\u{0}b"))
        #expect(try m.arguments() == [.string("ab")])
    }
}

/// A peer's message is turned into values only within the daemon's bounds:
/// past them, `LimitsExceeded`, before the values cost memory.
@Suite struct ArgumentBoundsTests {
    func signal(_ values: BusValue...) throws -> BusMessage {
        let m = try BusMessage.signal(path: "/x", interface: "org.example.Stranger", member: "Noise")
        try m.append(values)
        return m
    }

    @Test func aLongArrayIsRefusedBeforeItIsRead() throws {
        let m = try signal(.array(element: "y", Array(repeating: .byte(0), count: 100_000)))
        #expect(throws: BusError(name: BusError.limitsExceeded, "message holds more than 16384 values")) { try m.arguments() }
        let wide = ArgumentBounds(values: 200_000, depth: 4, bytes: 1 << 20)
        #expect(try m.arguments(within: wide).first?.signature == "ay")
    }

    @Test func longStringsAndDeepNestingAreRefused() throws {
        let long = try signal(.string(String(repeating: "x", count: 2 << 20)))
        #expect(throws: BusError(name: BusError.limitsExceeded, "message holds more than 1048576 bytes of arguments")) {
            try long.arguments()
        }
        var deep = BusValue.string("x")
        for _ in 0..<20 { deep = .variant(deep) }
        let nested = try signal(deep)
        #expect(throws: BusError(name: BusError.limitsExceeded, "message nests containers deeper than 16")) { try nested.arguments() }
        // What the daemon reads is far inside them.
        let properties = try signal(.string("org.freedesktop.NetworkManager"),
                                    .vardict([("Connectivity", .uint32(4)), ("Metered", .uint32(2))]), .array(element: "s", []))
        #expect(try properties.arguments().count == 3)
    }

    @Test func theHeaderIsCheckedWithoutReadingAnArgument() throws {
        let m = try signal(.array(element: "y", Array(repeating: .byte(0), count: 100_000)))
        #expect(!m.is(interface: "org.example.Stranger", member: "Noise", signature: "b"))
        #expect(m.is(interface: "org.example.Stranger", member: "Noise", signature: "ay", path: "/x"))
        #expect(!m.is(interface: "org.example.Stranger", member: "Noise", signature: "ay", path: "/y"))
    }

    @Test func aMessageFromItsWireFormIsReadAlike() throws {
        #expect(throws: BusError.self) { try BusMessage.demarshal(Array("not a message".utf8)) }
    }
}

@Suite struct ShownCallerStringTests {
    @Test(arguments: [
        ("Check", "Check"),
        ("wlan0 — ok", "wlan0 — ok"),
        ("\u{1b}[2Jx", "\\u{1b}[2Jx"),
        ("a\u{7}b\nc", "a\\u{7}b\\u{a}c"),
        ("right\u{202e}left", "right\\u{202e}left"),
        (String(repeating: "x", count: 1 << 20), String(repeating: "x", count: 64) + "…"),
    ])
    func callerStringsAreCutAndEscaped(input: String, shown: String) {
        #expect(BusError.shown(input) == shown)
    }
}
