import Foundation
import LifelineCore
import LifelineFormats
import Testing

/// The failed layer and the per-family states travel with every event: into the
/// log line and the state file, and back out of them for `status` and `history`.
struct DiagnosisFieldsTests {
    func event(_ diagnosis: Diagnosis, _ families: FamilyStates) -> StateEvent {
        var e = StateEvent(state: .limited, previous: .online, since: 1_700_000_000_000_000, interface: "wlan0",
                           kind: .wifi, reason: "wlan0 is connected but the router 192.168.1.1 does not answer",
                           rttMs: -1, metered: false, sequence: 9)
        e.diagnosis = diagnosis
        e.families = families
        return e
    }

    @Test func theLineCarriesBothFieldsAndReadsBack() throws {
        let e = event(.gateway, FamilyStates(ipv4: .limited, ipv6: .online))
        let line = JSONText.object(e)
        #expect(line.hasSuffix(#","diagnosis":"gateway","families":{"ipv4":"limited","ipv6":"online"}}"#), "\(line)")
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["families"] as? [String: String] == ["ipv4": "limited", "ipv6": "online"])
        #expect(StateRecord.parseEvent(Array(line.utf8))?.event == e)
    }

    @Test func onlineWithOneFamilyWritesOnlyThatFamily() {
        let e = event(.none, FamilyStates(ipv4: .online))
        let line = JSONText.object(e)
        #expect(line.hasSuffix(#","diagnosis":"","families":{"ipv4":"online"}}"#), "\(line)")
        #expect(StateRecord.parseEvent(Array(line.utf8))?.event == e)
        #expect(JSONText.object(event(.route, FamilyStates())).hasSuffix(#""families":{}}"#))
    }

    @Test func aLineWrittenBeforeTheFieldsExistedStillReads() {
        let old = #"{"state":"offline","previous":"online","since":1700000000000000,"interface":"","kind":"","reason":"carrier lost on eth0","rtt_ms":-1,"metered":false,"sequence":3}"#
        let parsed = StateRecord.parseEvent(Array(old.utf8))?.event
        #expect(parsed?.reason == "carrier lost on eth0")
        #expect(parsed?.diagnosis == Diagnosis.none)
        #expect(parsed?.families == FamilyStates())
    }

    @Test func aCraftedFamiliesObjectIsRefused() {
        let good = JSONText.object(event(.dns, FamilyStates(ipv4: .limited)))
        for bad in [#"{"ipv4":"sideways"}"#, #"{"ipx":"online"}"#, #"{"ipv4":1}"#, #"{"ipv4":{"x":"y"}}"#] {
            let line = good.replacingOccurrences(of: #"{"ipv4":"limited"}"#, with: bad)
            #expect(StateRecord.parseEvent(Array(line.utf8)) == nil, "\(line)")
        }
    }

    @Test func theDecisionCarriesTheDecidingMonitorsDiagnosis() {
        var link = Observation(role: .link, state: .online, interface: "wlan0", kind: .wifi, reason: "default route via wlan0")
        var probe = Observation(role: .reachability, state: .limited, interface: "wlan0",
                                reason: "The router answers but DNS (192.168.1.1) does not")
        probe.diagnosis = .dns
        probe.families = FamilyStates(ipv4: .limited)
        let limited = Decision.decide([Decision.Input(link, stamp: 1), Decision.Input(probe, stamp: 2)])
        #expect(limited?.diagnosis == .dns && limited?.families == FamilyStates(ipv4: .limited))
        // No route beats the probe, and so does the link's layer; no family has a route.
        link = Observation(role: .link, state: .offline, reason: "carrier lost on wlan0")
        link.diagnosis = .carrier
        let offline = Decision.decide([Decision.Input(link, stamp: 3), Decision.Input(probe, stamp: 2)])
        #expect(offline?.state == .offline && offline?.diagnosis == .carrier && offline?.families == FamilyStates())
    }

    @Test func aChangedDiagnosisReachesSinksWithoutATransition() async {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let sink = bus.attachSink(policy: .latest)
        let probe = bus.makeMonitorHandle(name: "probe")
        var o = Observation(role: .reachability, state: .limited, interface: "eth0", reason: "TCP connect to 10.0.0.1:80 was refused")
        o.diagnosis = .tcp
        probe.publish(o)
        #expect(bus.current.diagnosis == .tcp)
        o.diagnosis = .gateway
        o.reason = "eth0 is connected but the router 10.0.0.1 does not answer"
        probe.publish(o)
        #expect(bus.current.diagnosis == .gateway && bus.current.reason == o.reason)
        #expect(bus.current.sequence == 1, "an attribute change, not a second transition")
        bus.detachSink(sink)
        bus.shutdown()
    }
}
