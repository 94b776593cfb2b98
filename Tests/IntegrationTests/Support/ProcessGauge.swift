import Foundation

/// What /proc says about a running process: its memory, open descriptors,
/// threads and children. Fault tests compare these before and after.
struct ProcessGauge {
    let pid: Int32

    /// Resident memory in KiB (VmRSS), nil when the process is gone.
    var residentKiB: Int? { status("VmRSS").flatMap { Int($0.split(separator: " ").first ?? "") } }

    var threads: Int? { status("Threads").flatMap { Int($0) } }

    /// Open file descriptors.
    var descriptors: Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")).map(\.count)
    }

    /// Direct children of every thread of the process, with their command names.
    var children: [(pid: Int32, name: String, state: String)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var out: [(Int32, String, String)] = []
        for task in tasks {
            let list = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            for child in list.split(separator: " ").compactMap({ Int32($0) }) {
                let gauge = ProcessGauge(pid: child)
                out.append((child, gauge.status("Name") ?? "?", gauge.status("State") ?? "?"))
            }
        }
        return out
    }

    /// A field of /proc/PID/status, its value trimmed.
    func status(_ field: String) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

extension DaemonFixture {
    var gauge: ProcessGauge? { process.map { ProcessGauge(pid: $0.pid) } }

    /// Lines of the daemon's own log that contain `text`.
    func logLines(containing text: String) -> [String] {
        daemonLog.split(separator: "\n").map(String.init).filter { $0.contains(text) }
    }
}
