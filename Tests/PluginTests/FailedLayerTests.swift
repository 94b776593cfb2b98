import LifelineCore
import Testing
@testable import ProbeMonitor

/// Which layer a failed probe blames, and the sentence the user reads.
struct FailedLayerTests {
    let url = "http://check.example:8080/check_network_status.txt"

    func explain(_ kind: CurlError.Kind, _ stage: CurlError.Stage, url: String? = nil, message: String = "curl says no",
                 facts: PathFacts = PathFacts(interface: "wlan0", resolver: "192.168.1.1", gateway: "192.168.1.1", gatewayAnswers: true))
        -> (Diagnosis, String) {
        let error = CurlError(url: url ?? self.url, code: 0, kind: kind, message: message, stage: stage)
        let r = FailedLayer.explain(error, timeout: .seconds(5), facts: facts)
        return (r.layer, r.sentence)
    }

    @Test func aRouterThatDoesNotAnswerIsBlamedBeforeDNSOrTCP() {
        let silent = PathFacts(interface: "wlan0", resolver: "192.168.1.1", gateway: "192.168.1.1", gatewayAnswers: false)
        for (kind, stage) in [(CurlError.Kind.timeout, CurlError.Stage.resolving), (.timeout, .connecting), (.unreachable, .connecting), (.dns, .resolving)] {
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
            == (.dns, "DNS (192.168.1.1) could not resolve check.example: Could not resolve host: check.example"))
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
        func reply(_ status: Int, _ body: String = "") -> Result<HTTPReply, CurlError> {
            .success(HTTPReply(status: status, headers: [], body: Array(body.utf8), truncated: false,
                               redirect: status == 302 ? "http://login.example/" : nil, rttMs: 3))
        }
        #expect(e.judge(reply(302)) == .unexpected("probe to \(url) was redirected to http://login.example/ (HTTP 302)", layer: .portal))
        #expect(e.judge(reply(200, "<html>Welcome")) == .unexpected(
            "probe to \(url) got HTTP 200 with a body starting '<html>Welcome', expected 'NetworkManager is online'", layer: .portal))
        #expect(e.judge(reply(511)) == .unexpected("probe to \(url) got HTTP 511, expected 2xx", layer: .portal))
        #expect(e.judge(reply(503)) == .unexpected("probe to \(url) got HTTP 503, expected 2xx", layer: .http))
    }

    @Test func theLayerReachesThePublishedObservation() {
        var judge = ProbeJudge(failures: 1)
        let o = judge.record(.failed("The router answers but DNS (192.168.1.1) does not", layer: .dns), interface: "wlan0", path: 1, afterStall: nil)
        #expect(o.state == .limited && o.diagnosis == .dns)
        #expect(judge.record(.pong(rttMs: 4), interface: "wlan0", path: 1, afterStall: nil).diagnosis == Diagnosis.none)
        #expect(judge.record(.unexpected("redirected", layer: .portal), interface: "wlan0", path: 1, afterStall: nil).diagnosis == .portal)
    }

    @Test func kernelTablesGiveGatewayAndItsNeighbourState() {
        let route = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0
            wlan0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0
            wlan0\t0000000A\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0
            """
        #expect(HostFiles.defaultGateway(route: route, interface: "")! == ("wlan0", "10.0.0.1"))
        #expect(HostFiles.defaultGateway(route: route, interface: "eth0")! == ("eth0", "192.168.1.1"))
        #expect(HostFiles.defaultGateway(route: route, interface: "wwan0") == nil)
        let arp = """
            IP address       HW type     Flags       HW address            Mask     Device
            10.0.0.1         0x1         0x0         00:00:00:00:00:00     *        wlan0
            192.168.1.1      0x1         0x2         ce:6b:cf:ab:7b:37     *        eth0
            """
        #expect(HostFiles.neighbourAnswers(arp: arp, address: "10.0.0.1", device: "wlan0") == false)
        #expect(HostFiles.neighbourAnswers(arp: arp, address: "192.168.1.1", device: "eth0") == true)
        #expect(HostFiles.neighbourAnswers(arp: arp, address: "192.168.1.1", device: "wlan0") == nil)
        #expect(HostFiles.firstNameserver("# generated\nsearch lan\nnameserver 192.168.1.1\nnameserver 8.8.8.8\n") == "192.168.1.1")
        #expect(HostFiles.firstNameserver("options edns0\n") == nil)
    }

    @Test func ipv6DefaultRouteComesFromTheKernelTable() {
        let zero = String(repeating: "0", count: 32)
        let table = """
            \(zero) 00 \(zero) 00 \(zero) ffffffff 00000001 00000000 00200200       lo
            fd000000000000000000000000000000 40 \(zero) 00 \(zero) 00000100 00000001 00000000 00000001     eth0
            \(zero) 00 \(zero) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0
            \(zero) 00 \(zero) 00 fd770000000000000000000000000001 00000100 00000001 00000000 00000003    wlan0
            """
        // The lowest metric wins; lo's unreachable default (a reject route) never does.
        #expect(LayerWalk.ipv6DefaultRoute(table)! == ("wlan0", "fd77::1"))
        #expect(LayerWalk.ipv6DefaultRoute(table.split(separator: "\n").prefix(3).joined(separator: "\n"))! == ("eth0", "fe80::1"))
        #expect(LayerWalk.ipv6DefaultRoute(String(table.split(separator: "\n")[0])) == nil)
    }
}
