import LifelineCore

/// Turns an `Encodable` config back into plain values: the defaults a section
/// starts from when it is decoded, and what `lifeline config show` prints.
public enum ConfigEncoder {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public static func encode(_ value: some Encodable) throws(Failure) -> ConfigValue {
        let box = Slot()
        do {
            try value.encode(to: Writer(slot: box, codingPath: []))
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(error)")
        }
        // A value that wrote nothing (an empty struct) is an empty table.
        return box.resolved() ?? .table(ConfigTable())
    }
}

/// Where one encoded value lands; containers fill theirs in place.
private final class Slot {
    var value: ConfigValue?
    /// Set when the value is a keyed container: its entries, in encoding order.
    var entries: [(key: String, slot: Slot)]?
    /// Set when the value is an unkeyed container.
    var items: [Slot]?

    func resolved() -> ConfigValue? {
        if let entries {
            return .table(ConfigTable(entries.compactMap { entry in entry.slot.resolved().map { (entry.key, $0) } }))
        }
        if let items { return .array(items.compactMap { $0.resolved() }) }
        return value
    }
}

private struct Writer: Encoder, SingleValueEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<K: CodingKey>(keyedBy type: K.Type) -> KeyedEncodingContainer<K> {
        if slot.entries == nil { slot.entries = [] }
        return KeyedEncodingContainer(KeyedWriter<K>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if slot.items == nil { slot.items = [] }
        return UnkeyedWriter(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // `nil` leaves the key out: TOML has no null, and an absent key means "default".
    func encodeNil() {}
    func encode(_ value: Bool) { slot.value = .bool(value) }
    func encode(_ value: String) { slot.value = .string(value) }
    func encode(_ value: Double) { slot.value = .double(value) }
    func encode(_ value: Float) { slot.value = .double(Double(value)) }
    func encode(_ value: Int) { slot.value = .int(value) }
    func encode(_ value: Int8) { slot.value = .int(Int(value)) }
    func encode(_ value: Int16) { slot.value = .int(Int(value)) }
    func encode(_ value: Int32) { slot.value = .int(Int(value)) }
    func encode(_ value: Int64) { slot.value = .int(Int(value)) }
    func encode(_ value: UInt8) { slot.value = .int(Int(value)) }
    func encode(_ value: UInt16) { slot.value = .int(Int(value)) }
    func encode(_ value: UInt32) { slot.value = .int(Int(value)) }
    func encode(_ value: UInt) throws { slot.value = .int(try Self.fit(value)) }
    func encode(_ value: UInt64) throws { slot.value = .int(try Self.fit(value)) }

    func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: self)
    }

    static func fit<I: BinaryInteger>(_ value: I) throws(ConfigEncoder.Failure) -> Int {
        guard let v = Int(exactly: value) else { throw ConfigEncoder.Failure(description: "\(value) does not fit a TOML integer") }
        return v
    }
}

private struct KeyedWriter<K: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    func child(_ key: K) -> Writer {
        let child = Slot()
        if let i = slot.entries?.firstIndex(where: { $0.key == key.stringValue }) {
            slot.entries?[i].slot = child
        } else {
            slot.entries?.append((key.stringValue, child))
        }
        return Writer(slot: child, codingPath: codingPath + [key])
    }

    mutating func encodeNil(forKey key: K) {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: K) throws { try child(key).encode(value) }

    mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: K) -> KeyedEncodingContainer<N> {
        child(key).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer(forKey key: K) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { Writer(slot: slot, codingPath: codingPath) }
    mutating func superEncoder(forKey key: K) -> any Encoder { child(key) }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int { slot.items?.count ?? 0 }

    func next() -> Writer {
        let child = Slot()
        slot.items?.append(child)
        return Writer(slot: child, codingPath: codingPath)
    }

    mutating func encodeNil() {}
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encode(value) }

    mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) -> KeyedEncodingContainer<N> {
        next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}
