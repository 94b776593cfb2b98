import Foundation
import LifelineCore
import LifelineDBus
import Testing

@Suite struct Lifeline1Tests {
    @Test func packagedIntrospectionMatchesTheInterface() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let packaged = try String(contentsOf: root.appendingPathComponent("packaging/dbus/org.lifeline.Lifeline1.xml"), encoding: .utf8)
        #expect(packaged == Lifeline1.introspectionDocument)
    }

    @Test func detailsCarryEverySpecFieldAndReadBack() {
        let e = StateEvent(state: .portal, previous: .online, since: 1_700_000_000_123_456, interface: "wlan0", kind: .wifi,
                           reason: "redirected to http://login", rttMs: 23.5, metered: true, sequence: 42)
        let details = Lifeline1.details(e)
        #expect(details.map(\.0) == StateEvent.CodingKeys.allCases.map(\.stringValue))
        #expect(Lifeline1.event(fromDetails: details) == e)
        // Unknown keys are ignored, missing ones defaulted; no state, no event.
        #expect(Lifeline1.event(fromDetails: [("state", .string("online")), ("future", .bool(true))])?.rttMs == -1)
        #expect(Lifeline1.event(fromDetails: [("state", .string("sideways"))]) == nil)
    }

    @Test func diagnosisAndFamiliesReadBackFromDetails() {
        var e = StateEvent(state: .online, previous: .limited, since: 1_700_000_000_123_456, interface: "eth0", kind: .ethernet,
                           reason: "IPv6 does not answer: TCP connect to [2001:db8::1]:80 timed out after 5s", sequence: 43)
        e.diagnosis = .tcp
        e.families = FamilyStates(ipv4: .online, ipv6: .limited)
        let details = Lifeline1.details(e)
        #expect(details.first { $0.0 == "families" }?.1.signature == "a{ss}")
        #expect(Lifeline1.event(fromDetails: details) == e)
        #expect(Lifeline1.properties(e, mutedUntil: 0).first { $0.0 == "Diagnosis" }?.1 == .string("tcp"))
    }

    @Test func qualityIsAPropertyPairAndReadsBackFromDetails() {
        var e = StateEvent(state: .online, previous: .limited, since: 1_700_000_000_123_456, interface: "eth0", sequence: 44)
        let none = Lifeline1.properties(e, mutedUntil: 0)
        #expect(none.first { $0.0 == "Quality" }?.1 == .string(""))
        #expect(none.first { $0.0 == "QualityDetails" }?.1 == .vardict([]))
        #expect(!Lifeline1.details(e).contains { $0.0 == "quality" }, "no quality, no field")
        e.quality = Quality(level: .degraded, rttMs: 41.5, retransmitShare: 0.021, connections: 6, remotes: 3,
                            dnsFailures: 1, probeRttMs: 30, reason: "2.1 % of segments retransmitted")
        let properties = Lifeline1.properties(e, mutedUntil: 0)
        #expect(properties.map(\.0) == Lifeline1.propertySignatures.map(\.name))
        #expect(properties.first { $0.0 == "Quality" }?.1 == .string("degraded"))
        #expect(properties.first { $0.0 == "QualityDetails" }?.1.signature == "a{sv}")
        #expect(Lifeline1.event(fromDetails: Lifeline1.details(e)) == e)
        #expect(Lifeline1.introspectionDocument.contains(#"<property name="QualityDetails" type="a{sv}" access="read"/>"#))
    }
}
