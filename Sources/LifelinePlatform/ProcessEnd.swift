import Glibc

/// How the daemon's process ends once it has stopped.
public enum ProcessEnd {
    /// Flushes standard output and error, then ends the process with `code`
    /// without running the libraries' exit handlers and destructors.
    ///
    /// When the daemon has stopped, everything it owns is written (its files
    /// with write(2), its log line by line), but a probe thread may still be
    /// inside a C call nobody can interrupt: loading libcurl and its TLS
    /// library, or a DNS lookup left to finish on its own. exit(3) would tear
    /// those libraries down under it (the TLS library's destructors and exit
    /// handlers), and glibc documents exit as unsafe while other threads run:
    /// a daemon stopped just as a probe started could crash on its way out,
    /// one stop in thirty to a hundred, with a segmentation fault instead of 0.
    public static func now(_ code: Int32) -> Never {
        fflush(nil)
        _exit(code)
    }
}
