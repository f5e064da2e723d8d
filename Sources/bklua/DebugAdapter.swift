import BlocksBridge
import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// What bklua runs the script with when a debugger is involved (`--dap`, `--dap-listen`).
struct DebugAttachment {
    let session: DebugSession
    let stopOnEntry: Bool
    let waitForClient: Bool
}

/// `bklua --dap`: a debug adapter on stdin/stdout. The client's `launch` names the script; the
/// script's stdin is /dev/null and its stdout and stderr come to the client as `output` events.
func debugAdapterMain() -> Int32 {
    let input = dup(0), output = dup(1)
    guard input >= 0, output >= 0 else { return 1 }
    signal(SIGPIPE, SIG_IGN)  // a client gone: writes fail, the run ends (onConnectionEnded)
    let devNull = open("/dev/null", O_RDWR)
    if devNull >= 0 { dup2(devNull, 0) }
    var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
    guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { return 1 }
    dup2(outPipe[1], 1)
    dup2(errPipe[1], 2)
    close(outPipe[1])
    close(errPipe[1])
    bk_debugger_stdio(1)  // print reaches the client as it happens
    let session = DebugSession(mode: .launch)
    session.onTerminate = { _exit(0) }
    // The script lives as long as its client: a client gone mid-run ends it.
    session.onConnectionEnded = { [unowned session] in if !session.hasEnded { _exit(0) } }
    let stdoutDone = session.forwardOutput(from: outPipe[0], category: "stdout")
    let stderrDone = session.forwardOutput(from: errPipe[0], category: "stderr")
    guard session.serve(DebugTransport(input: input, output: output, closesDescriptors: false)) else { return 1 }
    guard let launch = session.waitForLaunch() else { return 0 }
    if let directory = launch.workingDirectory, chdir(directory) != 0 {
        session.output("bklua: cannot change to directory \(directory)\n", category: "important")
    }
    for (name, value) in launch.environment { setenv(name, value, 1) }
    // "--": the program is a file even when its name starts with "-" ("-e", "-i", "-").
    let argv = ["bklua", "--", launch.program] + launch.arguments
    let end = AdapterEnd(session: session, devNull: devNull, outputDone: [stdoutDone, stderrDone])
    // os.exit ends the process from inside the script: the client still gets the rest of the
    // output and the exit status.
    _ = bk_debugger_on_exit({ status, argument in
        guard let argument else { return }
        Unmanaged<AdapterEnd>.fromOpaque(argument).takeUnretainedValue().finish(status: status)
    }, Unmanaged.passRetained(end).toOpaque())
    let status = bkluaMain(argv: argv, debugger: DebugAttachment(session: session, stopOnEntry: launch.stopOnEntry, waitForClient: false))
    end.finish(status: status)
    return status
}

/// The end of a `--dap` run, once: the script's output drained, then `exited` and `terminated`.
final class AdapterEnd: @unchecked Sendable {
    let session: DebugSession
    let devNull: Int32
    let outputDone: [@Sendable () -> Void]
    private var finished = false

    init(session: DebugSession, devNull: Int32, outputDone: [@Sendable () -> Void]) {
        self.session = session
        self.devNull = devNull
        self.outputDone = outputDone
    }

    func finish(status: Int32) {
        if finished { return }  // the script's thread only (a return, or exit() on it)
        finished = true
        bk_debugger_stdio(0)
        if devNull >= 0 {
            dup2(devNull, 1)
            dup2(devNull, 2)
        }
        for wait in outputDone { wait() }
        session.scriptEnded(status: status)
        session.waitForDisconnect(seconds: 3)
    }
}

/// `bklua --dap-listen [host:]port [--dap-wait] script [args]`: runs the script and accepts one
/// debugger connection at a time on that TCP port (loopback by default).
func debugListenMain(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 3 else {
        Runner.message("bklua", "usage: bklua --dap-listen [host:]port [--dap-wait] script.lua [args]")
        return 1
    }
    let spec = arguments[2]
    var host = "127.0.0.1", portText = spec
    if let colon = spec.lastIndex(of: ":") {
        host = String(spec[..<colon])
        portText = String(spec[spec.index(after: colon)...])
    }
    guard let port = Int(portText), port >= 0, port <= 65535 else {
        Runner.message("bklua", "--dap-listen: '\(spec)' is not [host:]port")
        return 1
    }
    var rest = Array(arguments.dropFirst(3))
    let wait = rest.first == "--dap-wait"
    if wait { rest.removeFirst() }
    // A bad option is refused before the port opens (it ends bklua with the usage, nothing run).
    let options = CommandLineOptions(["bklua"] + rest)
    if options.badOption != nil || options.rateWithoutProfile != nil {
        return bkluaMain(argv: ["bklua"] + rest)
    }
    let listener: DebugListener
    do {
        listener = try DebugListener(host: host, port: port)
    } catch {
        Runner.message("bklua", error.description)
        return 1
    }
    Runner.message("bklua", "debugger listening on \(host):\(listener.port)")
    let session = DebugSession(mode: .attach)
    session.onTerminate = { _exit(1) }
    signal(SIGPIPE, SIG_IGN)  // a client gone mid-write: the script runs on
    let accepting = session.acceptClients(from: listener)
    guard accepting else { return 1 }
    let status = bkluaMain(argv: ["bklua"] + rest, debugger: DebugAttachment(session: session, stopOnEntry: false, waitForClient: wait))
    bk_debugger_stdio(0)
    session.scriptEnded(status: status)
    session.waitForDisconnect(seconds: 1)
    listener.close()
    return status
}
