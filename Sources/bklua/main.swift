import BlocksBridge
import CLua
import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// bklua: lua.c's command line on a BlocksBridge state, with `bk` and the `bk_` globals preloaded.
func bkluaMain(argv: [String] = CommandLine.arguments, debugger: DebugAttachment? = nil) -> Int32 {
    let progname = "bklua"
    let state: LuaState
    do {
        state = try LuaState(standardLibraries: false)
    } catch {
        Runner.message(progname, error.description)
        return 1
    }
    // Like lua.c's pmain, everything runs inside one C function, so tracebacks end the same way.
    var status: Int32 = 1
    // Unowned: the function lives in the state, so a strong capture would keep the state from ever
    // being closed (LeakSanitizer reports the whole state at exit).
    state.stack.push(function: "pmain") { [unowned state] _ in
        status = protectedMain(state: state, argv: argv, progname: progname, debugger: debugger)
        return 0
    }
    do {
        try state.stack.call(arguments: 0, results: 0)
    } catch {
        Runner.message(progname, error.description)
        status = 1
    }
    // Before the state goes: the session's thread may still poke it (breakpoints set after the
    // run ended), and a poke must not reach a freed state.
    if let debugger { state.stack.detachDebugger(debugger.session.hookClient) }
    return status
}

func protectedMain(state: LuaState, argv: [String], progname: String, debugger: DebugAttachment? = nil) -> Int32 {
    let options = CommandLineOptions(argv)
    let runner = Runner(progname: progname, argv: argv, state: state)
    if options.help {
        Help.print(progname: progname)
        return 0
    }
    if options.annotations {
        // library/bk.lua, embedded at build time: the LuaLS annotations of the bk module.
        StandardStreams.writeOutput(String(decoding: PackageResources.bk_lua, as: UTF8.self))
        return 0
    }
    if let bad = options.badOption {
        runner.printUsage(badOption: argv[bad])
        return 1
    }
    if let rate = options.rateWithoutProfile {
        StandardStreams.writeError("\(progname): '\(argv[rate])' needs --profile (bklua --profile --profile-rate=N script)\n")
        return 1
    }
    if options.version { Runner.printVersion() }
    if options.ignoreEnvironment {
        runner.stack.push(true)
        runner.stack.rawSet(LuaStack.registryIndex, field: "LUA_NOENV")
    }
    do throws(LuaError) {
        if options.sandbox {
            let status = state.stack.openLibraries(safe: true)
            if status != LUA_OK { throw state.stack.popError(status: status) }
        } else {
            try state.openStandardLibraries()
        }
    } catch {
        runner.report(error)
        return 1
    }
    state.installGlobals()
    runner.createArgTable(scriptIndex: options.scriptIndex)
    state.stack.useGenerationalCollector()
    applyLimits(options, to: state)
    if let debugger {
        do throws(LuaError) {
            try debugger.session.attach(to: state.stack, stopOnEntry: debugger.stopOnEntry)
        } catch {
            runner.report(error)
            return 1
        }
        if debugger.waitForClient {
            debugger.session.waitForConfiguration()
            state.resetLimits()  // --time-limit counts the script's time, not the wait for a client
        }
    }
    // From here on every way out writes the profile (os.exit too: ProfileOutput's exit handler).
    let profiling = options.profileFile.map { ProfileOutput.begin(state: state, file: $0, rate: options.profileRate) } ?? false
    defer { if profiling { ProfileOutput.finish() } }
    if !options.ignoreEnvironment, !runner.handleLuaInit() { return 1 }
    if !runner.runArguments(upTo: options.hasScript ? options.scriptIndex : argv.count,
                                skipping: options.sandboxArguments) { return 1 }
    if options.hasScript, !runner.handleScript(at: options.scriptIndex) { return 1 }
    if options.interactive {
        REPL(runner: runner).run()
        return 0
    } else if !options.hasScript && !options.executes && !options.version {
        if isatty(0) != 0 {
            Runner.printVersion()
            REPL(runner: runner).run()
            return 0
        } else if !runner.doFile(nil) {
            return 1
        }
    }
    // Like a Node.js process: after the script, the event loop runs until nothing is pending (or
    // the sandbox budget, one for the whole run, is spent). A script that scheduled nothing made
    // no loop, and none is made for it (start-up time).
    if let loop = state.eventLoopIfMade, !loop.run(), let reason = state.stopReason {
        StandardStreams.writeError("bklua: \(reason)\n")
        return 1
    }
    // Failed tasks no one awaited are reported now. An error the default reporter printed during
    // the run (no bk.onError handler) fails it, so CI sees it; a handler keeps the script's status.
    state.reportUnawaitedTaskFailures()
    return state.errorsReportedToStandardError > 0 ? 1 : 0
}

/// The sandbox options: one budget for the whole run (LUA_INIT, -e, -l, the script, the REPL).
func applyLimits(_ options: CommandLineOptions, to state: LuaState) {
    if options.sandbox { state.stack.installLimitHooks() }  // as LuaState(sandbox:) does
    state.instructionLimit = options.instructionLimit
    if options.timeLimit > 0 { state.timeLimit = .nanoseconds(Int64(options.timeLimit * 1e9)) }
    state.memoryLimit = options.memoryLimit
    state.resetLimits()
}

// The debugger's entry points come first, as --help does: the rest of the line is theirs.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "--dap" {
    if CommandLine.arguments.count > 2 {  // the client's launch request names the script and options
        Runner.message("bklua", "--dap takes no other arguments: the client's launch request names the script")
        exit(1)
    }
    exit(debugAdapterMain())
} else if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "--dap-listen" {
    exit(debugListenMain(CommandLine.arguments))
}
exit(bkluaMain())
