import Foundation
import LifelineCore
import LifelineProtocol
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
}
