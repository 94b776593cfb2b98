/// A D-Bus value of any type this package reads or writes. Containers carry
/// their element signatures so that empty arrays and dictionaries are typed.
public indirect enum BusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case variant(BusValue)
    /// `a<element>`; every element has the signature `element`.
    case array(element: String, [BusValue])
    /// `a{<key><value>}`, in order.
    case dictionary(key: String, value: String, [DictEntry])
    /// `(…)`
    case structure([BusValue])

    public struct DictEntry: Sendable, Equatable {
        public var key: BusValue
        public var value: BusValue
        public init(_ key: BusValue, _ value: BusValue) {
            self.key = key
            self.value = value
        }
    }

    /// `a{sv}`, the property-map type, from (name, value) pairs in order.
    public static func vardict(_ pairs: [(String, BusValue)]) -> BusValue {
        .dictionary(key: "s", value: "v", pairs.map { DictEntry(.string($0.0), .variant($0.1)) })
    }

    /// The D-Bus signature of this value.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    // Typed views, nil when the value has another type.
    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var uint32: UInt32? { if case .uint32(let u) = self { u } else { nil } }
    public var uint64: UInt64? { if case .uint64(let u) = self { u } else { nil } }
    public var int64: Int64? { if case .int64(let i) = self { i } else { nil } }
    public var double: Double? { if case .double(let d) = self { d } else { nil } }
    public var variant: BusValue? { if case .variant(let v) = self { v } else { nil } }

    /// An `a{sv}` as (name, value) pairs with the variants unwrapped; nil for any other type.
    public var vardictEntries: [(String, BusValue)]? {
        guard case .dictionary("s", "v", let entries) = self else { return nil }
        return entries.compactMap { e in
            guard let k = e.key.string, let v = e.value.variant else { return nil }
            return (k, v)
        }
    }
}
