import LifelineCore
import NetlinkMonitor
import Testing
@testable import LifelineNet
@testable import ProbeMonitor

/// Which layer a failed probe blames, and the sentence the user reads.
struct FailedLayerTests {
    let url = "http://check.example:8080/check_network_status.txt"

    func explain(_ kind: HTTPFailure.Kind, _ stage: HTTPFailure.Stage, url: String? = nil, message: String = "curl says no",
                 facts: PathFacts = PathFacts(interface: "wlan0", resolver: "192.168.1.1", gateway: "192.168.1.1", gatewayAnswers: true))
        -> (Diagnosis, String) {
        let error = HTTPFailure(url: url ?? self.url, code: 0, kind: kind, message: message, stage: stage)
        let r = FailedLayer.explain(error, timeout: .seconds(5), facts: facts)
        return (r.layer, r.sentence)
    }

    @Test func aRouterThatDoesNotAnswerIsBlamedBeforeDNSOrTCP() {
        let silent = PathFacts(interface: "wlan0", resolver: "192.168.1.1", gateway: "192.168.1.1", gatewayAnswers: false)
        for (kind, stage) in [(HTTPFailure.Kind.timeout, HTTPFailure.Stage.resolving), (.timeout, .connecting), (.unreachable, .connecting), (.dns, .resolving)] {
            let (layer, sentence) = explain(kind, stage, facts: silent)
            #expect(layer == .gateway)
            #expect(sentence == "wlan0 is connected but the router 192.168.1.1 does not answer")
        }
        // Once connected, the router evidently answers: the failure is above it.
        #expect(explain(.timeout, .exchanging, facts: silent).0 == .http)
    }

    @Test func dnsTimeoutNamesTheResolver() {
        #expect(explain(.timeout, .resolving) == (.dns, "The router answers but DNS (192.168.1.1) does not"))
        let unknownRouter = PathFacts(interface: "eth0", resolver: "10.0.0.53")
        #expect(explain(.timeout, .resolving, facts: unknownRouter)
            == (.dns, "DNS (10.0.0.53) did not answer for check.example within 5s"))
        #expect(explain(.dns, .resolving, message: "Could not resolve host: check.example")
            == (.dns, "DNS (192.168.1.1) could not resolve check.example"))
    }

    @Test func tcpNamesAddressAndPort() {
        #expect(explain(.timeout, .connecting) == (.tcp, "TCP connect to check.example:8080 timed out after 5s"))
        #expect(explain(.refused, .connecting, url: "http://10.0.0.1/x") == (.tcp, "TCP connect to 10.0.0.1:80 was refused"))
        // An address needs no lookup: a timeout before "resolved" is still the connect.
        #expect(explain(.timeout, .resolving, url: "https://[2001:db8::1]:8443/") == (.tcp, "TCP connect to [2001:db8::1]:8443 timed out after 5s"))
        #expect(explain(.unreachable, .connecting, url: "http://10.0.0.1/x", message: "No route to host")
            == (.tcp, "TCP connect to 10.0.0.1:80 failed: No route to host"))
    }

    @Test func tlsAndHTTPAreTheirOwnLayers() {
        #expect(explain(.tls, .handshaking, url: "https://check.example/", message: "SSL certificate problem")
            == (.tls, "TLS handshake with check.example failed: SSL certificate problem"))
        #expect(explain(.timeout, .handshaking, url: "https://check.example/") == (.tls, "TLS handshake with check.example timed out after 5s"))
        #expect(explain(.timeout, .exchanging) == (.http, "check.example:8080 accepted the connection but sent no HTTP reply within 5s"))
        #expect(explain(.noReply, .exchanging, message: "Empty reply from server")
            == (.http, "check.example:8080 sent no usable HTTP reply: Empty reply from server"))
    }

    @Test func unexpectedRepliesArePortalsUnlessTheServerFailed() {
        let e = ProbeExpectation(url: url, status: nil, bodyPrefix: "NetworkManager is online", header: "", timeout: .seconds(5))
        func reply(_ status: Int, _ body: String = "") -> Result<HTTPReply, HTTPFailure> {
            .success(HTTPReply(status: status, headers: [], body: Array(body.utf8), truncated: false,
                               redirect: status == 302 ? "http://login.example/" : nil, rttMs: 3))
        }
        #expect(e.judge(reply(302)) == .unexpected("probe to \(url) was redirected to http://login.example/ (HTTP 302)", layer: .portal))
        #expect(e.judge(reply(200, "<html>Welcome")) == .unexpected(
            "probe to \(url) got HTTP 200 with a body starting '<html>Welcome', expected 'NetworkManager is online'", layer: .portal))
        #expect(e.judge(reply(511)) == .unexpected("probe to \(url) got HTTP 511, expected 2xx", layer: .portal))
        // A server's error status is its failure, never a portal.
        #expect(e.judge(reply(503)) == .failed("probe to \(url) got HTTP 503, expected 2xx", layer: .http))
    }

    @Test func theLayerReachesThePublishedObservation() {
        var judge = ProbeJudge(failures: 1)
        let o = judge.record(.failed("The router answers but DNS (192.168.1.1) does not", layer: .dns), interface: "wlan0", path: 1, afterStall: nil)
        #expect(o.state == .limited && o.diagnosis == .dns)
        #expect(judge.record(.pong(rttMs: 4), interface: "wlan0", path: 1, afterStall: nil).diagnosis == Diagnosis.none)
        #expect(judge.record(.unexpected("redirected", layer: .portal), interface: "wlan0", path: 1, afterStall: nil).diagnosis == .portal)
    }

    @Test func theProbesFamilyPicksItsGateway() {
        let gateways = [DefaultGateway(family: .ipv4, interface: "wlan0", index: 3, address: "10.0.0.1", answers: true),
                        DefaultGateway(family: .ipv6, interface: "wlan0", index: 3, address: "fe80::1", answers: false)]
        #expect(HostFiles.gateway(gateways, interface: "wlan0", family: .ipv6)?.address == "fe80::1")
        #expect(HostFiles.gateway(gateways, interface: "", family: .ipv4)?.address == "10.0.0.1")
        #expect(HostFiles.gateway(gateways, interface: "", family: .any)?.address == "10.0.0.1")
        #expect(HostFiles.gateway(Array(gateways.suffix(1)), interface: "", family: .any)?.address == "fe80::1")
        #expect(HostFiles.gateway(gateways, interface: "eth0", family: .any) == nil)
        #expect(HostFiles.firstNameserver("# generated\nsearch lan\nnameserver 192.168.1.1\nnameserver 8.8.8.8\n") == "192.168.1.1")
        #expect(HostFiles.firstNameserver("options edns0\n") == nil)
    }

    @Test func aSilentIPv6RouterIsNamed() {
        let facts = PathFacts(interface: "wlan0", resolver: "192.168.1.1", gateway: "fe80::1", gatewayAnswers: false)
        let (layer, sentence) = explain(.timeout, .connecting, facts: facts)
        #expect(layer == .gateway)
        #expect(sentence == "wlan0 is connected but the router fe80::1 does not answer")
    }
}
