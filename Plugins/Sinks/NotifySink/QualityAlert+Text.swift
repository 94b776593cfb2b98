import LifelineCore
import LifelinePlatform

/// What the quality toast says: the numbers behind "poor", in words.
extension QualityAlert {
    static func toast(for q: Quality, _ t: Translator = .english) -> Toast {
        var parts: [String] = []
        if let share = q.retransmitShare {
            parts.append(t.tr("{percent} of packets resent", ["percent": percent(share) + " %"]))
        }
        if let rtt = q.rttMs ?? q.probeRttMs {
            parts.append(t.tr("round trip {time}", ["time": milliseconds(rtt)]))
        }
        if q.dnsFailures > 0 {
            parts.append(t.trn("{count} name lookup failed", "{count} name lookups failed", q.dnsFailures,
                               ["count": String(q.dnsFailures)]))
        }
        var body = parts.joined(separator: ", ")
        if let first = body.first, !t.isTranslating { body = first.uppercased() + body.dropFirst() }
        if !body.isEmpty { body += "." }
        var toast = Toast(summary: t.tr("Connection is poor"), body: body, icon: "network-error",
                          urgency: .normal, hasActions: false, timeout: 0, category: "network")
        toast.labels = Toast.Labels(t)
        return toast
    }

    /// "30", "8", "2.5", "0.4": whole numbers from 10 on, one decimal below where it says something.
    static func percent(_ share: Double) -> String {
        let p = share * 100
        if p >= 10 { return String(Int(p.rounded())) }
        let tenths = Int((p * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(tenths % 10)"
    }

    /// "850 ms" below a second, "1.2 s" from one on.
    static func milliseconds(_ ms: Double) -> String {
        if ms < 1000 { return "\(Int(ms.rounded())) ms" }
        let tenths = Int((ms / 100).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
