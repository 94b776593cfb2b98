import LifelineCore
import Testing
@testable import LifelineNet
@testable import NetlinkMonitor
@testable import ProbeMonitor

/// Through a VPN: the tunnel or the link underneath, and the sentence the user reads.
struct TunnelFactsTests {
    let url = "http://10.95.0.1:8080/check_network_status.txt"

    func carrier(up: Bool = true, carrier: Bool = true, answers: Bool? = true) -> TunnelReader.Carrier {
        TunnelReader.Carrier(interface: "wlan0", router: "192.168.1.1", routerAnswers: answers, isUp: up, hasCarrier: carrier,
                             foundBy: "the VPN server 203.0.113.7")
    }

    func explain(_ tunnel: TunnelFacts?, _ kind: HTTPFailure.Kind = .timeout, _ stage: HTTPFailure.Stage = .connecting) -> (Diagnosis, String) {
        var facts = PathFacts(interface: "wg0")
        facts.tunnel = tunnel
        let r = FailedLayer.explain(HTTPFailure(url: url, code: 0, kind: kind, message: "", stage: stage), timeout: .seconds(1), facts: facts)
        return (r.layer, r.sentence)
    }

    @Test func aSilentTunnelOverAWorkingLinkIsTheTunnel() {
        let facts = TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: carrier())
        #expect(explain(facts) == (.tunnel, "the VPN tunnel wg0 passes no traffic; wlan0 underneath reaches its router"))
        #expect(explain(facts, .timeout, .resolving).0 == .tunnel)
        // Without the link underneath, or not knowing whether its router answers, only the tunnel is named.
        #expect(explain(TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: nil))
            == (.tunnel, "the VPN tunnel wg0 passes no traffic"))
        #expect(explain(TunnelFacts(tunnel: "tun0", passesNothing: true, carrier: carrier(answers: nil)))
            == (.tunnel, "the VPN tunnel tun0 passes no traffic"))
    }

    @Test func theLinkUnderneathIsNamedWhenItIsBroken() {
        #expect(explain(TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: carrier(answers: false)))
            == (.gateway, "wlan0 is connected but the router 192.168.1.1 does not answer"))
        #expect(explain(TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: carrier(carrier: false)))
            == (.carrier, "wlan0 has no carrier"))
        #expect(explain(TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: carrier(up: false)))
            == (.link, "wlan0 is down"))
    }

    @Test func aTunnelThatPassesTrafficLeavesTheUsualLayers() {
        let working = TunnelFacts(tunnel: "wg0", passesNothing: false, carrier: carrier())
        #expect(explain(working) == (.tcp, "TCP connect to 10.95.0.1:8080 timed out after 1s"))
        // Refused: something answered through the tunnel.
        #expect(explain(TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: carrier()), .refused).0 == .tcp)
        // Once connected the tunnel evidently works.
        #expect(explain(TunnelFacts(tunnel: "wg0", passesNothing: true, carrier: carrier()), .timeout, .exchanging).0 == .http)
    }

    @Test func wireGuardsAnswerIsReadForTheFirstPeer() {
        let text = """
            private_key=aa
            listen_port=40403
            fwmark=51820
            public_key=bb
            preshared_key=00
            protocol_version=1
            endpoint=10.77.1.1:51999
            last_handshake_time_sec=1795771507
            last_handshake_time_nsec=0
            tx_bytes=1580
            rx_bytes=836
            persistent_keepalive_interval=0
            allowed_ip=0.0.0.0/0
            public_key=cc
            endpoint=[2001:db8::9]:51820
            tx_bytes=1
            errno=0


            """
        let state = WireGuardState.parse(text)
        #expect(state == WireGuardState(endpoint: "10.77.1.1", lastHandshake: 1_795_771_507, rxBytes: 836, txBytes: 1580, fwmark: 51820))
        #expect(WireGuardState.host("[2001:db8::9]:51820") == "2001:db8::9")
        // An error answer, or no peer, says nothing.
        #expect(WireGuardState.parse("errno=2\n\n") == nil)
        #expect(WireGuardState.parse("private_key=aa\nerrno=0\n\n") == nil)
    }

    @Test func aHandshakeOlderThanASessionKeyLivesIsStale() {
        var state = WireGuardState(endpoint: "10.0.0.1", lastHandshake: 1000)
        #expect(!state.handshakeIsStale(now: 1000 + 120))
        #expect(!state.handshakeIsStale(now: 1000 + WireGuardState.silentAfter))
        #expect(state.handshakeIsStale(now: 1000 + WireGuardState.silentAfter + 1))
        state.lastHandshake = 0
        #expect(state.handshakeIsStale(now: 5))
    }
}
