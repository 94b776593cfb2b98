import LifelineCore

/// The captive-portal API the network announced, on `org.lifeline.Lifeline1`:
/// - property `CaptivePortal` a{sv}: the event's `captive_portal` members
///   (`api`, `source`, and the keys the API's answer gave), empty when none
///   was announced; with `PropertiesChanged`, like every property;
/// - the same as `captive_portal` in `StateChanged`'s and `GetStatus`'s details.
extension Lifeline1 {
    public static let captivePortalSignature = (name: "CaptivePortal", signature: "a{sv}")

    /// `a{sv}` of the portal's members; empty for none.
    public static func captivePortalValue(_ portal: CaptivePortal?) -> BusValue {
        .vardict((portal?.members ?? []).map { ($0.name, busValue($0.value)) })
    }

    static func busValue(_ value: CaptivePortal.Value) -> BusValue {
        switch value {
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .integer(let n): .int64(n)
        }
    }

    /// The portal an `a{sv}` describes; nil when empty or without `api` and `source`.
    public static func captivePortal(from value: BusValue?) -> CaptivePortal? {
        guard let entries = value?.vardictEntries else { return nil }
        return CaptivePortal(members: entries.compactMap { name, value in
            switch value {
            case .string(let s): (name, .string(s))
            case .bool(let b): (name, .bool(b))
            case .int64(let n): (name, .integer(n))
            default: nil
            }
        })
    }
}
