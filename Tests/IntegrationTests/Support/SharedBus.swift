import Foundation

/// A private `dbus-daemon` configuration that root (the daemon under test) and one
/// unprivileged user (the desktop under test, which refuses to run as root) may
/// both join, own names on and watch.
enum SharedBus {
    static func writeConfig(
        to file: URL, type: String = "session", address: String, user: String, serviceDirectory: URL? = nil
    ) throws {
        let services = serviceDirectory.map { "<servicedir>\($0.path)</servicedir>" } ?? ""
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(type)</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              \(services)
              <policy context="default">
                <allow user="root"/>
                <allow user="\(user)"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(to: file, atomically: true, encoding: .utf8)
    }
}
