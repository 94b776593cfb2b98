// `lifeline-daemon`: `lifeline daemon`, the process that runs all day.
//
// The front binary replaces itself with this one (execv: the pid systemd and the
// session bus started stays). It links the plugins, the bus and
// swift-service-lifecycle, and none of Foundation, TOMLKit or ArgumentParser:
// they held most of the daemon's resident memory, and a daemon needs none of
// them. A config file is parsed by `lifeline-cli config parse-toml` in a child
// process, as the CLI does. The full CLI answers whatever this program does
// not understand (`--help`, a mistyped option), so `lifeline daemon --help`
// prints the same help as every other command.
import Glibc
import LifelineCore
import LifelineDaemon
import LifelineExecutor
import LifelinePlatform
import Logging

InheritedSignals.resetChildSignal()
let arguments = CommandLine.arguments
guard let options = DaemonOptions(arguments) else {
    SiblingProgram.exec("lifeline-cli", arguments)
}
// The user's language is read here, while only one thread runs: setlocale is
// not safe once the sinks' threads exist.
_ = Translator.user
// Before any task exists: tasks and sleeps run on threads that wake only for
// work, and a task waiting for a socket is woken by those same threads.
if let executor = EpollExecutor.install() { DescriptorWaiting.install(executor) }
let logger = DaemonLogging.bootstrap()
// The daemon runs in a task, and this thread waits for good. Ending it instead,
// as an async main does (libdispatch's dispatch_main calls pthread_exit), makes
// glibc unwind its stack once, which reads the executable's unwind tables into
// memory that then stays resident all day. Nothing runs on the main queue.
Task.detached {
    let code = await Daemon.run(configPath: options.config, logger: logger)
    ProcessEnd.now(code.rawValue)
}
while true { pause() }
