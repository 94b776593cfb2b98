import Glibc
import LifelineCore
import LifelineNet

/// `lifeline-bench sockdiag INTERFACE [--count N]`: what one quality sample
/// costs the probe's counter watcher: the sock_diag read of every TCP socket,
/// the filter to those through INTERFACE and the estimator, N times in a row,
/// in the namespace it runs in. Prints the connections seen and kept, and per
/// sample the CPU time of the process and its voluntary context switches (a
/// reply it had to wait for), for bench/quality.sh.
enum SockDiagBench {
    static func run(_ args: [String]) async {
        guard let interface = args.first else {
            print("usage: lifeline-bench sockdiag INTERFACE [--count N]")
            exit(2)
        }
        let count = args.firstIndex(of: "--count").flatMap { Int(args[$0 + 1]) } ?? 200
        var estimator = QualityEstimator()
        var seen = 0, kept = 0
        let before = usage()
        for i in 0..<count {
            do {
                let reading = try SockDiagReader.read(interface: interface)
                seen = reading.seen
                kept = reading.connections.count
                _ = estimator.sample(reading.connections.compactMap(\.flowSample), at: Moment(offset: .seconds(i)))
            } catch {
                print("sockdiag: \(error)")
                exit(1)
            }
        }
        let after = usage()
        let cpuUs = Double(after.cpuUs - before.cpuUs) / Double(count)
        let switches = Double(after.switches - before.switches) / Double(count)
        print("sockdiag: \(seen) connections listed, \(kept) through \(interface)")
        print("sockdiag: per sample \(String(format: "%.1f", cpuUs)) µs CPU, \(String(format: "%.2f", switches)) voluntary switches (\(count) samples)")
    }

    /// The process's CPU time (user + system, µs) and voluntary context switches: it does nothing else meanwhile.
    static func usage() -> (cpuUs: Int, switches: Int) {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        let cpu = (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1_000_000 + Int(u.ru_utime.tv_usec + u.ru_stime.tv_usec)
        return (cpu, u.ru_nvcsw)
    }
}
