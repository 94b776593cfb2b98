import LifelineCore

/// The address family a check or a walk uses: `any` asks each family that has a
/// default route.
public enum AddressFamily: String, ConfigChoice {
    case any, ipv4, ipv6
}
