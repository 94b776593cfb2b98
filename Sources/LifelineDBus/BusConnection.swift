import CDBus
import Glibc
import LifelineCore
import LifelineGLib
import LifelinePlatform
import Synchronization

/// Owns one private `DBusConnection` (closed and unreferenced in `deinit`).
///
/// Two ways to use it:
/// - Blocking, from one thread (the CLI): `callBlocking(_:timeout:)`, `addMatch`,
///   `readWrite(timeoutMs:)` + `popMessage()`.
/// - Attached to a `MainLoopThread` (the daemon): `attach(to:)` runs libdbus
///   inside that GLib context (watch and timeout functions, a wake-up and a
///   dispatch-status idle), and from then on every libdbus call on this
///   connection runs on the loop thread (`send` queues there and returns), so
///   no thread ever blocks in libdbus holding up another's sends (a thread
///   blocking in a read-write-dispatch call was measured to delay sends by its
///   whole timeout).
///   Exported objects, signal handlers and the disconnect handler are called
///   on the loop thread; `call(_:timeout:) async` awaits a reply without blocking.
public final class BusConnection: @unchecked Sendable {
    let raw: OpaquePointer
    private let router = Router()
    private let attachment = Mutex<Glue?>(nil)

    public enum Bus: Sendable { case session, system }

    /// Takes over a reference to a private connection the caller owns.
    init(taking raw: OpaquePointer) {
        self.raw = raw
        // Losing the bus is reported to `onDisconnect` handlers, never an exit() inside libdbus.
        dbus_connection_set_exit_on_disconnect(raw, 0)
        let routerRef = Unmanaged.passRetained(router).toOpaque()
        router.connection = raw
        router.owner = self
        dbus_connection_add_filter(raw, { _, message, data in
            let router = Unmanaged<Router>.fromOpaque(data!).takeUnretainedValue()
            return router.handle(BusMessage(retaining: message!))
                ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }, routerRef, { data in
            Unmanaged<Router>.fromOpaque(data!).release()
        })
    }

    /// A new private connection to the session or system bus (registered: it has a unique name).
    public static func connect(_ bus: Bus) throws(BusError) -> BusConnection {
        _ = dbus_threads_init_default()
        let type = bus == .session ? DBUS_BUS_SESSION : DBUS_BUS_SYSTEM
        guard let raw = try BusError.check({ dbus_bus_get_private(type, $0) }) else {
            throw BusError(name: BusError.failed, "cannot connect to the \(bus) bus")
        }
        return BusConnection(taking: raw)
    }

    /// The session bus address, without libdbus' X11 autolaunch: neither the
    /// daemon nor a CLI may start a bus as a side effect.
    public static func sessionBusAddress(_ variable: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> String? {
        if let address = variable("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return address }
        if let runtime = variable("XDG_RUNTIME_DIR"), !runtime.isEmpty, access(runtime + "/bus", F_OK) == 0 {
            return "unix:path=\(runtime)/bus"
        }
        return nil
    }

    /// `connect(address:)` through `Blocking`: connecting waits for the bus to
    /// answer `Hello`, which a stuck bus may never do; a cancelled caller goes on.
    public static func open(address: String) async throws(BusError) -> BusConnection {
        let connected = await Blocking.runUnlessCancelled { () -> Result<BusConnection, BusError> in
            Result { () throws(BusError) -> BusConnection in try connect(address: address) }
        }
        guard let connected else { throw BusError(name: BusError.failed, "connecting to \(address) was cancelled") }
        return try connected.get()
    }

    /// A new private connection to the bus at `address`, registered with it.
    public static func connect(address: String) throws(BusError) -> BusConnection {
        _ = dbus_threads_init_default()
        guard let raw = try BusError.check({ dbus_connection_open_private(address, $0) }) else {
            throw BusError(name: BusError.failed, "cannot connect to \(address)")
        }
        let connection = BusConnection(taking: raw)
        _ = try BusError.check { dbus_bus_register(raw, $0) }
        return connection
    }

    deinit {
        let raw = self.raw
        let close = {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
        }
        if let glue = attachment.withLock({ $0 }) { glue.loop.sync(close) } else { close() }
    }

    /// Runs `body` where libdbus may be called: the loop thread once attached, else here.
    private func onLoop<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if let loop = attachment.withLock({ $0?.loop }) { return try loop.sync(body) }
        return try body()
    }

    // MARK: State

    /// The unique name the bus gave this connection (":1.42").
    public var uniqueName: String {
        onLoop { dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? "" }
    }

    public var isConnected: Bool { onLoop { dbus_connection_get_is_connected(raw) != 0 } }

    /// Messages longer than `bytes` end the connection as soon as their
    /// header is in, before libdbus buffers their body. On a bus where any
    /// user may address a signal to this connection (the system bus lets
    /// through 32 MiB), libdbus would otherwise hold such a message twice
    /// (its read buffer and the message) before any handler could drop it;
    /// a connection lost is one the monitors open again.
    public func refuseMessages(longerThan bytes: Int) {
        onLoop { dbus_connection_set_max_message_size(raw, bytes) }
    }

    // MARK: Sending

    /// Queues `message` for sending. Attached: returns at once, messages leave in
    /// the order they were sent; else it is written before this returns.
    public func send(_ message: BusMessage) {
        if let loop = attachment.withLock({ $0?.loop }), !loop.isCurrent {
            loop.perform { _ = dbus_connection_send(self.raw, message.raw, nil) }
            return
        }
        _ = dbus_connection_send(raw, message.raw, nil)
        if attachment.withLock({ $0 == nil }) { dbus_connection_flush(raw) }
    }

    /// Emits a signal.
    public func emit(path: String, interface: String, member: String, _ arguments: [BusValue]) throws(BusError) {
        let signal = try BusMessage.signal(path: path, interface: interface, member: member)
        try signal.append(arguments)
        send(signal)
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` for `interface` on `path`.
    public func emitPropertiesChanged(path: String, interface: String, changed: [(String, BusValue)]) throws(BusError) {
        try emit(path: path, interface: BusObject.propertiesInterface, member: "PropertiesChanged",
                 [.string(interface), .vardict(changed), .array(element: "s", [])])
    }

    /// Sends a method call and blocks until its reply (at most `timeout`); an
    /// error reply is thrown. When attached this blocks the loop: use it only
    /// for set-up, and the async form otherwise.
    public func callBlocking(_ message: BusMessage, timeout: Duration = .seconds(25)) throws(BusError) -> BusMessage {
        let ms = Self.milliseconds(timeout)
        let raw = self.raw
        let reply = try onLoop { () throws(BusError) -> OpaquePointer? in
            try BusError.check { dbus_connection_send_with_reply_and_block(raw, message.raw, ms, $0) }
        }
        guard let reply else { throw BusError(name: BusError.noReply, "no reply") }
        return BusMessage(taking: reply)
    }

    /// Sends a method call and waits for its reply without blocking a thread.
    /// Needs `attach(to:)`. An error reply is thrown.
    public func call(_ message: BusMessage, timeout: Duration = .seconds(25)) async throws(BusError) -> BusMessage {
        guard let loop = attachment.withLock({ $0?.loop }) else {
            throw BusError(name: BusError.failed, "async call on a connection without a loop")
        }
        let ms = Self.milliseconds(timeout)
        let result: Result<BusMessage, BusError> = await withCheckedContinuation { continuation in
            loop.perform {
                let waiter = PendingReply(continuation)
                var pending: OpaquePointer?
                guard dbus_connection_send_with_reply(self.raw, message.raw, &pending, ms) != 0, let pending else {
                    waiter.finish(.failure(BusError(name: BusError.disconnected, "not connected")))
                    return
                }
                let ref = Unmanaged.passRetained(waiter).toOpaque()
                dbus_pending_call_set_notify(pending, { pending, data in
                    let waiter = Unmanaged<PendingReply>.fromOpaque(data!).takeUnretainedValue()
                    waiter.complete(pending!)
                }, ref, { data in
                    Unmanaged<PendingReply>.fromOpaque(data!).release()
                })
                // Completed before the notify was set (it cannot on the loop thread, but be sure).
                if dbus_pending_call_get_completed(pending) != 0 { waiter.complete(pending) }
                dbus_pending_call_unref(pending)
            }
        }
        let reply = try result.get()
        if let error = reply.asError { throw error }
        return reply
    }

    private static func milliseconds(_ d: Duration) -> Int32 {
        let (s, atto) = d.components
        return Int32(clamping: s * 1000 + atto / 1_000_000_000_000_000)
    }

    // MARK: Bus daemon calls

    public enum NameReply: Sendable, Equatable {
        case primaryOwner, inQueue, exists, alreadyOwner
    }

    /// `RequestName`; `doNotQueue` fails at once (`.exists`) when another owns
    /// it. Asynchronous (needs `attach(to:)`): the bus may take its time.
    public func requestName(_ name: String, doNotQueue: Bool = true) async throws(BusError) -> NameReply {
        try Validate.busName(name)
        let m = try BusMessage.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "RequestName")
        try m.append(.string(name), .uint32(doNotQueue ? UInt32(LIFELINE_DBUS_NAME_FLAG_DO_NOT_QUEUE) : 0))
        guard let code = try await call(m).arguments().first?.uint32 else {
            throw BusError(name: BusError.invalidArgs, "RequestName: unexpected reply")
        }
        switch Int32(bitPattern: code) {
        case LIFELINE_DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER: return .primaryOwner
        case LIFELINE_DBUS_REQUEST_NAME_REPLY_IN_QUEUE: return .inQueue
        case LIFELINE_DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER: return .alreadyOwner
        default: return .exists
        }
    }

    /// The process id of the connection owning `name` (GetConnectionUnixProcessID),
    /// asked asynchronously (needs `attach(to:)`), waiting at most 5 s.
    public func processID(of name: String) async throws(BusError) -> UInt32 {
        let m = try BusMessage.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                          member: "GetConnectionUnixProcessID")
        try m.append(.string(name))
        guard let pid = try await call(m, timeout: .seconds(5)).arguments().first?.uint32 else {
            throw BusError(name: BusError.invalidArgs, "GetConnectionUnixProcessID: unexpected reply")
        }
        return pid
    }

    /// Adds a match rule so that matching signals are delivered here.
    public func addMatch(_ rule: String) throws(BusError) {
        let raw = self.raw
        try onLoop { () throws(BusError) in
            _ = try BusError.check { dbus_bus_add_match(raw, rule, $0) }
        }
    }

    static let busName = "org.freedesktop.DBus"
    static let busPath = "/org/freedesktop/DBus"

    // MARK: Blocking receive (not attached)

    /// Reads and writes for up to `timeoutMs` (-1: until something happens).
    /// False once the connection is closed.
    public func readWrite(timeoutMs: Int32) -> Bool {
        dbus_connection_read_write(raw, timeoutMs) != 0
    }

    /// The next received message, if one is queued. Popped messages bypass
    /// exported objects and handlers.
    public func popMessage() -> BusMessage? {
        dbus_connection_pop_message(raw).map { BusMessage(taking: $0) }
    }

    // MARK: Serving (attached)

    /// Serves `object` at its path. Method calls to unknown paths, interfaces or
    /// members, and calls with wrong signatures get the matching
    /// `org.freedesktop.DBus.Error.*` reply.
    public func export(_ object: BusObject) {
        router.export(object)
    }

    /// Calls `handler` (on the loop thread) for every signal received.
    public func onSignal(_ handler: @escaping @Sendable (BusMessage) -> Void) {
        router.addSignalHandler(handler)
    }

    /// Calls `handler` once (on the loop thread) when the connection to the bus is lost.
    public func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        router.addDisconnectHandler(handler)
    }

    /// Runs libdbus inside `loop`'s GLib context from now on. Awaits the loop
    /// rather than blocking this thread on it.
    public func attach(to loop: MainLoopThread) async {
        guard let glue = claimAttachment(loop) else { return }
        _ = try? await loop.run { glue.install() }
    }

    private func claimAttachment(_ loop: MainLoopThread) -> Glue? {
        let glue = Glue(loop: loop, connection: raw)
        let firstTime = attachment.withLock { a -> Bool in
            if a != nil { return false }
            a = glue
            return true
        }
        return firstTime ? glue : nil
    }
}

/// One pending async call: resumes its continuation exactly once.
private final class PendingReply: @unchecked Sendable {
    private let once = Mutex<CheckedContinuation<Result<BusMessage, BusError>, Never>?>(nil)

    init(_ continuation: CheckedContinuation<Result<BusMessage, BusError>, Never>) {
        once.withLock { $0 = continuation }
    }

    func finish(_ result: Result<BusMessage, BusError>) {
        once.withLock { c in
            defer { c = nil }
            return c
        }?.resume(returning: result)
    }

    func complete(_ pending: OpaquePointer) {
        guard let reply = dbus_pending_call_steal_reply(pending) else {
            finish(.failure(BusError(name: BusError.noReply, "no reply")))
            return
        }
        finish(.success(BusMessage(taking: reply)))
    }
}
