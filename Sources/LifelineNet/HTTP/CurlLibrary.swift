import CCurl

/// libcurl is loaded when the first transfer needs it, not linked: a daemon
/// whose probes never use it (no probe, or a plain `http://` check) does not
/// carry libcurl and the TLS, Kerberos, LDAP and SSH libraries it brings, all
/// day (`bench/memory.sh` measures them). Installed packages name libcurl3-gnutls as a dependency.
package enum CurlLibrary {
    /// What a person installs to get the library back.
    package static let installHint = "apt install libcurl3-gnutls"

    /// Loads libcurl once for the process; later calls return at once. The
    /// error names the library and what failed, and says what to install.
    package static func load() throws(CurlEasy.SetupError) {
        if let error = loadError({ lifeline_curl_load($0, $1) }) {
            throw CurlEasy.SetupError(description: "cannot load libcurl (\(installHint)): \(error)")
        }
    }

    /// Opens `soname` and looks up every function the probe calls, then closes
    /// it again; nil when all were found, else why not. It leaves what `load`
    /// loaded alone: for checking the loader's failures.
    package static func check(soname: String) -> String? {
        loadError { lifeline_curl_load_named(soname, $0, $1) }
    }

    private static func loadError(_ attempt: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        let status = buffer.withUnsafeMutableBufferPointer { attempt($0.baseAddress!, $0.count) }
        guard status != 0 else { return nil }
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return text.isEmpty ? "unknown error" : text
    }
}
